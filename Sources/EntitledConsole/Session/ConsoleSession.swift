import EntitledClient

/// Runs console commands against a server: parses a line, sends its request, shows the answer and
/// remembers what the answer taught it for completion. The same session serves the interactive console,
/// scripts and one-shot commands; only where its text goes differs.
public final class ConsoleSession {
    public let connection: EntitledConnection
    /// What responses have shown so far, for Tab completion.
    public internal(set) var knowledge = SessionKnowledge()
    /// When the catalog was last read (milliseconds since the epoch), for `refreshCatalogIfStale()`.
    private var catalogReadAt: Int64?
    /// Print the server's response lines as they are instead of tables and sentences.
    public let printsJSON: Bool
    public let style: TextStyle
    /// Where the token came from, named when the server refuses it; `nil` when none was given.
    public let tokenOrigin: TokenOrigin?
    /// What a command that removes or takes back data (`revoke`, `undefine`, `erase`) does first.
    public var confirmation: ConfirmationPolicy
    /// The number of the script line being run, which every error message then starts with (`line 3:
    /// error: ...`); `nil` outside scripts.
    public var lineNumber: Int?
    /// Called after the server confirmed an erasure (the `erase` command, or `raw` with `"op":"erase"`),
    /// with the erased user and device ids: the interactive console takes every line naming them out of
    /// its history file, since the person is gone from the server.
    public var erasureHandler: (([String]) -> Void)?
    /// entitled-stores' webhook admin routes, for the `webhooks` command; `nil` where the console cannot
    /// reach them (the command then says so).
    public var webhookAdministration: (any WebhookAdministration)?
    /// Where answers go, and errors as they are (`standardError(_:)` adds the script line's number).
    let standardOutput: (String) -> Void
    let writeError: (String) -> Void
    private var warnedAboutAuthentication = false

    /// - Parameters:
    ///   - standardOutput: receives answers, one block of text (without a final newline) per call.
    ///   - standardError: receives error messages the same way.
    ///   - tokenOrigin: where the connection's token came from, if it has one.
    ///   - confirmation: what `revoke`, `undefine` and `erase` do first; by default they are refused, as
    ///     where nobody can be asked and `--yes` was not given.
    public init(
        connection: EntitledConnection, printsJSON: Bool, style: TextStyle, tokenOrigin: TokenOrigin? = nil,
        confirmation: ConfirmationPolicy = .refuse,
        standardOutput: @escaping (String) -> Void, standardError: @escaping (String) -> Void
    ) {
        self.connection = connection
        self.printsJSON = printsJSON
        self.style = style
        self.tokenOrigin = tokenOrigin
        self.confirmation = confirmation
        self.standardOutput = standardOutput
        self.writeError = standardError
    }

    /// Writes an error (or a warning) for the person, after the script line's number when there is one.
    func standardError(_ text: String) {
        writeError(lineNumber.map { "line \($0): " + text } ?? text)
    }

    /// Runs one line of console input. Blank lines and lines starting with `#` do nothing.
    public func run(line: String) -> CommandOutcome {
        let trimmed = line.drop { $0.isWhitespace }
        if trimmed.isEmpty || trimmed.first == "#" { return .nothing }
        do {
            guard let command = try CommandParser.parse(line: line) else { return .nothing }
            return execute(command)
        } catch {
            standardError(style.red("error: ") + error.message)
            return .usageError
        }
    }

    /// Runs one command given as separate words (a one-shot command line). A `watch` that succeeds then
    /// follows: it shows each change the server pushes until the connection fails (or the process is
    /// interrupted).
    public func runOneShot(words: [String]) -> CommandOutcome {
        let outcome = run(words: words)
        guard outcome == .succeeded, words.first?.lowercased() == "watch" else { return outcome }
        return followPushes()
    }

    /// Shows each line the server pushes as it arrives, until the connection fails; returns the
    /// connection error then.
    public func followPushes() -> CommandOutcome {
        while true {
            do {
                guard let push = try connection.nextPush(timeout: EntitledConnection.maximumTimeout) else { continue }
                show(push)
            } catch {
                if case .connectionClosed = error {
                    standardError(style.red("error: ") + "\(connection.address) closed the connection; the watch has ended")
                } else {
                    standardError(style.red("error: ") + describe(error))
                }
                return .connectionError
            }
        }
    }

    /// Shows the lines the server has pushed since the last look (after a `watch`), without waiting.
    public func showArrivedPushes() {
        for push in connection.takeAvailablePushes() { show(push) }
    }

    /// The lines the server has pushed since the last look, as text to show (learned from, like those
    /// shown), without waiting: for a caller that prints them itself, above a line being typed.
    public func takeArrivedPushText() -> [String] {
        connection.takeAvailablePushes().map(text(of:))
    }

    private func show(_ push: EntitledPush) {
        standardOutput(text(of: push))
    }

    private func text(of push: EntitledPush) -> String {
        knowledge.learn(from: push)
        if printsJSON { return push.line }
        return ResponseRenderer(style: style, now: ConsoleTime.nowMilliseconds()).push(push, remaining: remainingAccess(after: push))
    }

    /// For a push of a membership that gives no access any more: what its owner still has, read from the
    /// server once the change is there (`minSeq`), so that "no access" is never said of a subject that has
    /// access through another membership. `nil` when not needed or not to be had (the line then speaks of
    /// the membership alone).
    private func remainingAccess(after push: EntitledPush) -> EntitledResponse? {
        guard let membership = push.membership, !membership.isActive else { return nil }
        guard membership.user != nil || membership.device != nil else { return nil }
        // The user's access when the membership has one (a claimed purchase is the user's), else the device's.
        let request: EntitledRequest =
            if let user = membership.user {
                .customer(user: user, minSeq: push.sequence.map(UInt64.init))
            } else {
                .customer(device: membership.device, minSeq: push.sequence.map(UInt64.init))
            }
        guard let answer = try? connection.send(request), answer.isOK else { return nil }
        return answer
    }

    /// Runs one command given as separate words (a one-shot command line).
    public func run(words: [String]) -> CommandOutcome {
        do {
            guard let command = try CommandParser.parse(words: words) else { return .nothing }
            return execute(command)
        } catch {
            standardError(style.red("error: ") + error.message)
            return .usageError
        }
    }

    public func execute(_ command: ParsedCommand) -> CommandOutcome {
        switch command {
        case .quit:
            return .quit
        case .help(let topic):
            guard let topic else {
                standardOutput(HelpText.overview(style: style))
                return .succeeded
            }
            guard let spec = CommandSpec.named(topic) else {
                let error = ConsoleUsageError.unknownCommand(topic, suggestions: CommandSuggestions.closest(to: topic))
                standardError(style.red("error: ") + error.message)
                return .usageError
            }
            standardOutput(HelpText.command(spec, style: style))
            return .succeeded
        case .export(let plan):
            return export(plan)
        case .webhooks(let command):
            return webhooks(command)
        case .raw(let line):
            let outcome = exchange { () throws(EntitledClientError) in try connection.send(line: line) } show: { response in
                // raw shows the response line as the server wrote it, whatever the output mode.
                if response.isOK { standardOutput(response.line) } else { standardError(response.line) }
            }
            if outcome == .succeeded, let erasure = try? JSONValue(parsing: line), erasure["op"]?.stringValue?.lowercased() == "erase" {
                erased(user: erasure["user"]?.stringValue, device: erasure["device"]?.stringValue)
            }
            return outcome
        case .request(let command, let request):
            if let refusal = CheckAdvice.misuse(of: request, knowledge: knowledge) {
                standardError(style.red("error: ") + refusal.message)
                return .usageError
            }
            if let removal = ConfirmedRemoval(command), let outcome = confirm(removal, request) { return outcome }
            var misused = false
            let outcome = exchange { () throws(EntitledClientError) in try connection.send(request) } show: { response in
                // An inactive check of a product, in a session that has not read the catalog (a script, a
                // one-shot command): read it now, once, to tell an entitlement given as a product. A session
                // that knows the catalog judged the name before sending. The advice says what the server
                // answered: it is the truth about that product, only not about the entitlement.
                if command == .check, !knowledge.knowsCatalog, response.isOK, response["active"]?.boolValue == false,
                    request.string("product") != nil
                {
                    learnCatalog()
                    if let advice = CheckAdvice.inactiveAnswerAdvice(for: request, knowledge: knowledge) {
                        misused = true
                        if printsJSON { standardOutput(response.line) }
                        standardError(style.red("error: ") + advice)
                        return
                    }
                }
                if printsJSON {
                    standardOutput(response.line)
                    return
                }
                let renderer = ResponseRenderer(style: style, now: ConsoleTime.nowMilliseconds())
                if let failure = response.error {
                    standardError(renderer.failure(failure))
                    if let hint = AuthenticationAdvice.hint(for: failure, tokenOrigin: tokenOrigin) {
                        standardError(style.yellow("hint: ") + hint)
                    }
                } else {
                    standardOutput(renderer.render(command: command, request: request, response: response))
                }
            }
            if misused { return .usageError }
            if outcome == .succeeded, let removal = ConfirmedRemoval(command) { forgetRemoved(removal, request) }
            return outcome
        }
    }

    /// Keeps completion from offering what `undefine` or `erase` just removed.
    private func forgetRemoved(_ removal: ConfirmedRemoval, _ request: EntitledRequest) {
        switch removal {
        case .undefine: if let name = request.string("entitlement") { knowledge.forget(entitlement: name) }
        case .erase: erased(user: request.string("user"), device: request.string("device"))
        case .revoke: break
        }
    }

    /// Forgets a person the server has erased, here and (through `erasureHandler`) in the history.
    private func erased(user: String?, device: String?) {
        knowledge.forget(user: user, device: device)
        let ids = [user, device].compactMap { $0 }
        if !ids.isEmpty { erasureHandler?(ids) }
    }

    /// Asks before a command that removes or takes back data, showing what it will touch; `nil` when it
    /// may go ahead, else how it ended (refused, declined, or the look-up failed to connect).
    private func confirm(_ removal: ConfirmedRemoval, _ request: EntitledRequest) -> CommandOutcome? {
        switch confirmation {
        case .assumeYes:
            return nil
        case .refuse:
            standardError(style.red("error: ") + ConsoleUsageError.confirmationRequired(removal.command.spec).message)
            return .usageError
        case .ask(let ask):
            var answer: EntitledResponse?
            if let lookup = ConfirmationPreview.lookup(removal, request: request, knowledge: knowledge) {
                do {
                    answer = try connection.send(lookup)
                } catch {
                    standardError(style.red("error: ") + describe(error))
                    return .connectionError
                }
                if let answer { knowledge.learn(from: answer) }
            }
            let renderer = ResponseRenderer(style: style, now: ConsoleTime.nowMilliseconds())
            standardOutput(ConfirmationPreview.text(removal, request: request, lookup: answer, renderer: renderer))
            guard ask(ConfirmationPreview.question(removal, request: request)) else {
                standardOutput(ConfirmationPreview.declined(removal))
                return .nothing
            }
            return nil
        }
    }

    /// Asks the server for its catalog and learns it, showing nothing: completion then knows the
    /// entitlements and products before the person has listed anything. Failures are left for the next
    /// command to report.
    public func learnCatalog() {
        if let response = try? connection.send(.catalog) {
            knowledge.learn(from: response)
            catalogReadAt = ConsoleTime.nowMilliseconds()
        }
    }

    /// How old (milliseconds) the catalog completion knows may be before a completion reads it again.
    public static let catalogRefreshMilliseconds: Int64 = 5_000

    /// Reads the catalog again when completion last read it more than `catalogRefreshMilliseconds` ago,
    /// so that entitlements and products defined since, by another console, a script or the stores'
    /// receiver, complete too. Called when a person asks for a completion: one small request, at most
    /// every few seconds, and none while the server is away (a Tab must not wait for a reconnection).
    public func refreshCatalogIfStale() {
        guard connection.isConnected else { return }
        if let readAt = catalogReadAt, ConsoleTime.nowMilliseconds() - readAt < Self.catalogRefreshMilliseconds { return }
        learnCatalog()
    }

    private func exchange(
        _ send: () throws(EntitledClientError) -> EntitledResponse, show: (EntitledResponse) -> Void
    ) -> CommandOutcome {
        let response: EntitledResponse
        do {
            response = try send()
        } catch {
            standardError(style.red("error: ") + describe(error))
            return .connectionError
        }
        warnIfTokenUnused()
        warnIfWatchesLost()
        knowledge.learn(from: response)
        show(response)
        showArrivedPushes()
        return response.isOK ? .succeeded : .failedOnServer
    }

    /// The sentence for a client error: the console's options for a TLS problem, the token's origin when
    /// the server refused the token.
    public func describe(_ error: EntitledClientError) -> String {
        ConnectionAdvice.message(for: error) ?? AuthenticationAdvice.message(for: error, tokenOrigin: tokenOrigin)
    }

    private func warnIfWatchesLost() {
        let lost = connection.takeLostWatches()
        guard lost > 0 else { return }
        standardError(
            style.yellow("warning: ")
                + "the connection to \(connection.address) was reopened and its \(lost == 1 ? "watch is" : "\(lost) watches are") gone; watch again"
        )
    }

    private func warnIfTokenUnused() {
        guard connection.serverIgnoresAuthentication, !warnedAboutAuthentication else { return }
        warnedAboutAuthentication = true
        standardError(
            style.yellow("warning: ")
                + "\(connection.address) requires no authentication; the token was not needed"
        )
    }
}
