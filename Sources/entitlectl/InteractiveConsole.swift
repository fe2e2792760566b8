import EntitledClient
import EntitledConsole

/// The console a person types into: a prompt naming the server (or saying it is not connected), line
/// editing, history, completion and hints.
struct InteractiveConsole {
    let session: ConsoleSession
    let historyPath: String?

    func run() -> Int32 {
        let session = session
        let editor = LineEditor(
            programName: "entitlectl",
            historyPath: historyPath,
            complete: { Completer.candidates(forLine: $0, knowledge: session.knowledge) },
            hint: ArgumentHint.hint(forLine:)
        )
        let connection = session.connection
        do {
            try connection.connect()
            session.learnCatalog()
        } catch {
            StandardStreams.error(session.style.red("error: ") + error.message + "\n")
        }
        while true {
            // Changes pushed while the person was reading or typing (after a watch).
            session.showArrivedPushes()
            let wasConnected = connection.isConnected
            let prompt = wasConnected ? "\(connection.address)> " : "not connected> "
            guard case .line(let line) = editor.readLine(prompt: prompt) else {
                StandardStreams.output("\n")
                return 0
            }
            if HistoryPolicy.shouldRecord(line) { editor.remember(line) }
            if session.run(line: line) == .quit { return 0 }
            // Back after the server was away: refresh what completion knows of its catalog.
            if !wasConnected && connection.isConnected { session.learnCatalog() }
        }
    }
}
