/// Runs an import: each identifier once (however many times it is listed), at most `concurrency` at a time,
/// skipping what the journal says an earlier run finished, recording every result in the report and the
/// journal, and drawing the progress.
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

    /// What a batch came to.
    public struct Batch: Sendable, Hashable {
        /// Keys an earlier run finished, not asked again.
        public var skipped = 0
        /// Keys reported failed (after the retries).
        public var failed = 0
    }

    /// Imports `keys` (a batch: a file's identifiers, a page of a listing) with `work`. A key that failed in
    /// a way that may pass (the store or `entitled` unavailable) is tried again after `retryWaits` (a
    /// restart of `entitled`, a store's bad minute), and only its last result is reported.
    @discardableResult
    public func run(
        _ keys: [String], progress: ImportProgress?, retryWaits: [Duration] = [.seconds(2), .seconds(10), .seconds(30)],
        work: @escaping @Sendable (String) async -> ImportResult
    ) async -> Batch {
        var batch = Batch()
        var skipped = 0
        var pending: [String] = []
        // A file may list an identifier twice (rows of a query, two exports): it is imported once, or the
        // same purchase would be asked of its store and brought to it several times at once.
        var seen = Set<String>()
        for key in keys where seen.insert(key).inserted {
            if journal.isFinished(key) {
                skipped += 1
                progress?.advance(failed: false)
            } else {
                pending.append(key)
            }
        }
        var round = 0
        while !pending.isEmpty {
            let last = round == retryWaits.count
            let (again, failed) = await runRound(pending, progress: progress, last: last, work: work)
            batch.failed += failed
            if again.isEmpty || last { break }
            progress?.retrying(again.count, after: retryWaits[round])
            try? await Task.sleep(for: retryWaits[round])
            round += 1
            pending = again
        }
        batch.skipped = skipped
        return batch
    }

    /// What one key's try came to in a round.
    private enum Try: Sendable {
        case finished
        case failed
        /// To try again in the next round (not reported yet).
        case again(String)
    }

    /// Runs `keys` once each; returns those to try again (reported only in the last round) and how many
    /// were reported failed.
    private func runRound(
        _ keys: [String], progress: ImportProgress?, last: Bool, work: @escaping @Sendable (String) async -> ImportResult
    ) async -> (again: [String], failed: Int) {
        await withTaskGroup(of: Try.self) { group in
            var again: [String] = []
            var failed = 0
            func take(_ outcome: Try) {
                switch outcome {
                case .finished: break
                case .failed: failed += 1
                case .again(let key): again.append(key)
                }
            }
            var running = 0
            for key in keys {
                if running == concurrency {
                    if let outcome = await group.next() { take(outcome) }
                    running -= 1
                }
                running += 1
                group.addTask {
                    let result = await work(key)
                    if result.status == .failed, result.mayPassLater, !last { return .again(key) }
                    report.record(result)
                    if result.status != .failed { journal.markFinished(key) }
                    progress?.advance(failed: result.status == .failed)
                    return result.status == .failed ? .failed : .finished
                }
            }
            for await outcome in group { take(outcome) }
            return (again, failed)
        }
    }
}
