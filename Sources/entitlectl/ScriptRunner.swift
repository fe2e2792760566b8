import EntitledConsole

/// Runs commands read line by line from standard input when it is not a terminal.
struct ScriptRunner {
    let session: ConsoleSession
    let continueAfterFailure: Bool

    /// Returns the exit status: that of the first failure (or, with `continueAfterFailure`, the worst
    /// failure seen), 0 when every command succeeded.
    func run() -> Int32 {
        var worst: Int32 = 0
        var number = 0
        defer { session.lineNumber = nil }
        while let line = readLine(strippingNewline: true) {
            number += 1
            // Errors name the line, so a failure in a long script is found without counting.
            session.lineNumber = number
            let outcome = session.run(line: line)
            if outcome == .quit { break }
            guard outcome.isFailure else { continue }
            if !continueAfterFailure { return outcome.exitStatus }
            worst = max(worst, outcome.exitStatus)
        }
        return worst
    }
}
