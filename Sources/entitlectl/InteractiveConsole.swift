import EntitledClient
import EntitledConsole

#if canImport(Glibc)
import Glibc
#endif

/// The console a person types into: a prompt naming the server (or saying it is not connected), line
/// editing, history, completion and hints.
struct InteractiveConsole {
    let session: ConsoleSession
    let historyPath: String?
    /// The token the connection authenticates with, kept out of the history wherever it appears.
    let token: String?

    func run() -> Int32 {
        // The terminal's encoding (UTF-8, usually) for the keys typed and the text shown: libedit
        // reads and draws characters in the locale's encoding, and the C locale has no accented letters.
        setlocale(LC_CTYPE, "")
        let session = session
        let editor = LineEditor(
            programName: "entitlectl",
            historyPath: historyPath,
            complete: { line in
                session.refreshCatalogIfStale()
                return Completer.candidates(forLine: line, knowledge: session.knowledge)
            },
            hint: ArgumentHint.hint(forLine:)
        )
        let connection = session.connection
        // An erased person is gone from the server; the lines naming them go from the history too.
        session.erasureHandler = { ids in editor.forget { HistoryPolicy.line($0, names: ids) } }
        defer { session.erasureHandler = nil }
        // Without --yes, revoke, undefine and erase show what they will touch and ask here.
        if case .refuse = session.confirmation {
            session.confirmation = .ask { question in
                guard case .line(let answer) = editor.readLine(prompt: question) else { return false }
                return ConfirmationPreview.isYes(answer)
            }
        }
        // Pushed changes are shown as they arrive, above the line being typed.
        let wakePipe = WakePipe()
        if let wakePipe {
            connection.setPushArrivalHandler { wakePipe.wake() }
            editor.printAboveLine(onWake: wakePipe.readDescriptor) { session.takeArrivedPushText() }
        }
        defer { connection.setPushArrivalHandler(nil) }
        do {
            try connection.connect()
            session.learnCatalog()
        } catch {
            StandardStreams.error(session.style.red("error: ") + session.describe(error) + "\n")
            // A server that is down may come back, and the prompt waits for it; a refused token would be
            // refused again at every command, so the console ends and the person fixes the token.
            if case .authenticationFailed = error { return CommandOutcome.connectionError.exitStatus }
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
            if HistoryPolicy.shouldRecord(line, token: token) { editor.remember(line) }
            if session.run(line: line) == .quit { return 0 }
            // Back after the server was away: refresh what completion knows of its catalog.
            if !wasConnected && connection.isConnected { session.learnCatalog() }
        }
    }
}
