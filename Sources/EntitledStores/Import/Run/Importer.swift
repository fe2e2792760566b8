/// Runs an import: each identifier once, at most `concurrency` at a time, skipping what the journal says an
/// earlier run finished, recording every result in the report and the journal, and drawing the progress.
///
/// What one identifier means (fetch it from its store, bring `entitled` to it) is the caller's `work`; the
/// importer only knows keys. A failure that may pass later (the store or `entitled` unavailable, a rate
/// limit that outlasted the retries) is reported `failed` and left out of the journal, so that the next
/// run tries it again.
public struct Importer: Sendable {
    public let journal: ImportJournal
    public let report: ImportReport
    public let concurrency: Int

    public init(journal: ImportJournal, report: ImportReport, concurrency: Int) {
        self.journal = journal
        self.report = report
        self.concurrency = max(1, concurrency)
    }

    /// Imports `keys` (a batch: a file's identifiers, a page of a listing) with `work`; returns how many were
    /// skipped as finished by an earlier run.
    @discardableResult
    public func run(
        _ keys: [String], progress: ImportProgress?, work: @escaping @Sendable (String) async -> ImportResult
    ) async -> Int {
        var skipped = 0
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for key in keys {
                if journal.isFinished(key) {
                    skipped += 1
                    progress?.advance(failed: false)
                    continue
                }
                if running == concurrency {
                    await group.next()
                    running -= 1
                }
                running += 1
                group.addTask {
                    let result = await work(key)
                    report.record(result)
                    if result.status != .failed { journal.markFinished(key) }
                    progress?.advance(failed: result.status == .failed)
                }
            }
        }
        return skipped
    }
}
