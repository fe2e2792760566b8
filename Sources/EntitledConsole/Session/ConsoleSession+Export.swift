import EntitledClient

/// The `export` command: not one request and its answer like the others, but every page of an export,
/// read one after another on the session's connection, written as they come.
extension ConsoleSession {
    /// Reads the whole export `plan` asks for and writes its lines to the plan's file (put in place only
    /// once complete) or to standard output; then says how many memberships and as of which change, on
    /// standard output after a file, on standard error after lines on standard output (so that they
    /// stay a clean copy). On a failure, says how far it got and what was left.
    func export(_ plan: ExportPlan) -> CommandOutcome {
        let sink: any ExportSink
        if let file = plan.file {
            do {
                sink = try ExportFile(path: file)
            } catch {
                standardError(style.red("error: ") + exportFailureMessage(error, progress: nil, plan: plan, sink: nil))
                return error.outcome
            }
        } else {
            sink = ExportStream(output: standardOutput)
        }
        var reader = ExportReader(plan: plan)
        let connection = connection
        do {
            let summary = try reader.run(send: { request throws(EntitledClientError) in try connection.send(request) }, into: sink)
            try sink.finish()
            let line = ResponseRenderer(style: style, now: ConsoleTime.nowMilliseconds()).exportSummary(summary, plan: plan)
            if plan.file == nil { writeError(line) } else { standardOutput(line) }
            return .succeeded
        } catch {
            sink.discard()
            standardError(style.red("error: ") + exportFailureMessage(error, progress: reader.summary, plan: plan, sink: sink))
            return error.outcome
        }
    }

    /// `the export stopped after 2 pages (2000 memberships): lost the connection to ...; nothing was
    /// written to x.jsonl`: how far it got, why it stopped, and what is left of it.
    private func exportFailureMessage(_ failure: ExportFailure, progress: ExportSummary?, plan: ExportPlan, sink: (any ExportSink)?) -> String {
        let cause =
            switch failure {
            case .connection(let error): describe(error)
            case .refused(let refusal):
                "the server refused \(progress == nil ? "the export" : "its next page") (\(refusal.code)): \(refusal.message)"
            case .malformedPage(let what): "the server sent " + what
            case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
            }
        var text = cause
        if let progress {
            text = "the export stopped after \(ResponseRenderer.count(progress.pages, "page")) "
                + "(\(ResponseRenderer.count(progress.memberships, "membership"))): " + cause
        }
        if let file = plan.file {
            // Before the file was made there is nothing to say about it: the cause names the path.
            if sink != nil { text += "; nothing was written to \(file)" }
        } else if (sink as? ExportStream)?.wroteLines == true {
            text += "; the lines written to standard output are an incomplete copy"
        }
        return text
    }
}
