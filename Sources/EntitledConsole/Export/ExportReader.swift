import EntitledClient

/// Reads a whole export, page after page, and hands its lines to a sink as each page comes.
///
/// Every page is sent through the one `send` it is given (the session's connection): the server that
/// answered the first page holds the copy, and another server would not know its cursor. Pages are
/// written as they come, so the console holds one page at a time however large the store.
struct ExportReader {
    let plan: ExportPlan
    /// What has been read and written so far; after a failure, how far the export got.
    private(set) var summary: ExportSummary?

    init(plan: ExportPlan) {
        self.plan = plan
    }

    /// Reads every page and writes its lines to `sink`; returns what was read. The sink is not
    /// finished here: the caller puts the file in place once this returns.
    mutating func run(
        send: (EntitledRequest) throws(EntitledClientError) -> EntitledResponse, into sink: any ExportSink
    ) throws(ExportFailure) -> ExportSummary {
        var cursor: String?
        // A server that gave the same cursor twice would be followed forever.
        var cursors: Set<String> = []
        repeat {
            let answer: EntitledResponse
            do {
                answer = try send(plan.request(after: cursor))
            } catch {
                throw .connection(error)
            }
            if let failure = answer.error { throw .refused(failure) }
            let page = try ExportPage(answer, expectsHistory: plan.includesHistory)
            var lines = page.lines
            if let summary {
                // Every page carries the copy's change: another one means the pages are not of one copy.
                guard page.sequence == summary.sequence, page.time == summary.time else {
                    throw .malformedPage("page \(summary.pages + 1) is of another export (change \(page.sequence), not \(summary.sequence))")
                }
            } else {
                lines.insert(try page.headerLine(), at: 0)
                summary = ExportSummary(sequence: page.sequence, time: page.time)
            }
            try sink.write(lines)
            summary?.pages += 1
            summary?.memberships += page.memberships.count
            summary?.historyEntries += page.history.count
            cursor = page.next
            if let cursor, !cursors.insert(cursor).inserted {
                throw .malformedPage("the server gave the next page's cursor \(cursor) twice; following it would never end")
            }
        } while cursor != nil
        // Set by the first page, which the loop always reads.
        guard let summary else { throw .malformedPage("the export had no page") }
        return summary
    }
}
