/// Tab completion for console lines: a pure function of the text before the cursor and what the session
/// knows, so it is tested without a terminal.
public enum Completer {
    /// The candidates for the word the cursor is in.
    public static func candidates(forLine line: String, knowledge: SessionKnowledge) -> Completion {
        let (finished, current) = CommandWords.splitForCompletion(line)
        guard let commandWord = finished.first else {
            // The command name, matched without regard to case.
            let names = CommandSpec.all.map(\.name).filter { $0.hasPrefix(current.lowercased()) }.sorted()
            return Completion(partial: current, candidates: names)
        }
        guard let spec = CommandSpec.named(commandWord) else { return Completion(partial: current, candidates: []) }
        let arguments = Array(finished.dropFirst())
        let words = argumentWords(for: spec, arguments: arguments, knowledge: knowledge)
        let lowered = current.lowercased()
        var matches = Set(words.filter { $0.lowercased().hasPrefix(lowered) })
        // "user:" typed in full with users known: offer the users, not the prefix itself again.
        if matches.count > 1 { matches = matches.filter { $0.lowercased() != lowered } }
        return Completion(partial: current, candidates: matches.sorted())
    }

    /// Every word that could come next after `arguments`.
    static func argumentWords(for spec: CommandSpec, arguments: [String], knowledge: SessionKnowledge) -> [String] {
        let hasUser = arguments.contains { $0.lowercased().hasPrefix("user:") }
        let hasDevice = arguments.contains { $0.lowercased().hasPrefix("device:") }
        var subjects: [String] = []
        if !hasUser { subjects += ["user:"] + knowledge.users.map { "user:" + $0 } }
        if !hasDevice { subjects += ["device:"] + knowledge.devices.map { "device:" + $0 } }
        let positional = arguments.filter {
            !$0.lowercased().hasPrefix("user:") && !$0.lowercased().hasPrefix("device:") && !$0.contains("=")
        }
        // The options the command takes (its spec lists them), less those already typed.
        let options = spec.options.map { $0 + "=" }.filter { key in !arguments.contains { $0.lowercased().hasPrefix(key) } }
        switch spec.command {
        case .check:
            let targets = positional.isEmpty ? Array(knowledge.products) + knowledge.entitlements.map { "entitlement:" + $0 } : []
            return subjects + targets + options
        case .grant:
            var words =
                subjects
                + options
                + CommandSpec.sources.map { "source=" + $0 } + ["renews=yes", "renews=no"]
                + CommandSpec.periodTypes.map { "period=" + $0 } + CommandSpec.environments.map { "env=" + $0 }
                + CommandSpec.ownerships.map { "ownership=" + $0 } + CommandSpec.grantTypes.map { "type=" + $0 }
            if positional.isEmpty {
                words += knowledge.products
            } else if positional.count == 1 {
                words += ["lifetime", "until", "30d", "7d", "1mo", "1y"]
            }
            return words
        case .claim, .erase:
            return subjects + options
        case .undefine:
            return arguments.isEmpty ? Array(knowledge.entitlements) : options
        case .show, .customer:
            return subjects + options
        case .history:
            let hasEntitlement = arguments.contains { $0.lowercased().hasPrefix("entitlement:") }
            let targets = hasUser || hasDevice ? [] : hasEntitlement ? [] : knowledge.entitlements.map { "entitlement:" + $0 } + ["entitlement:"]
            return (hasEntitlement ? [] : subjects) + targets + options
        case .changes:
            return subjects + options
        case .export:
            // After `to` comes a FILE: a path, which the console leaves to the person.
            if arguments.last?.lowercased() == "to" { return [] }
            let typed = Set(arguments.map { $0.lowercased() })
            return ["history", "to"].filter { !typed.contains($0) } + options
        case .watch, .unwatch:
            let hasAll = arguments.contains { $0.lowercased() == "all" }
            if hasAll { return [] }
            return subjects + (hasUser || hasDevice ? [] : ["all"])
        case .revoke:
            return arguments.isEmpty ? Array(knowledge.membershipIDs) : ["refund", "chargeback", "manual"]
        case .extend:
            // The membership, then a term as grant offers them (or until and a TIME), then the reason=.
            switch positional.count {
            case 0: return Array(knowledge.membershipIDs)
            case 1: return ["7d", "30d", "1mo", "1y", "until"]
            case 2 where positional[1].lowercased() == "until": return []
            default: return options
            }
        case .event:
            switch positional.count {
            case 0: return Array(knowledge.membershipIDs)
            case 1: return CommandSpec.eventTypes
            default:
                let untilTyped = positional.dropFirst(2).contains { $0.lowercased() == "until" }
                return options
                    + knowledge.products.map { "product=" + $0 } + (untilTyped ? [] : ["until"])
            }
        case .define:
            if arguments.isEmpty { return Array(knowledge.entitlements) }
            return Array(knowledge.products.subtracting(arguments)) + options
        case .webhooks:
            // The action or an endpoint, then the endpoint, then (for redeliver) one of its given-up messages.
            let endpoints = knowledge.webhookEndpoints.keys
            guard let action = arguments.first?.lowercased() else { return ["resume", "redeliver"] + endpoints }
            switch (action, arguments.count) {
            case ("resume", 1), ("redeliver", 1): return Array(endpoints)
            case ("redeliver", 2): return Array(knowledge.webhookEndpoints[arguments[1]] ?? [])
            default: return []
            }
        case .help:
            return arguments.isEmpty ? CommandSpec.all.map(\.name) : []
        default:
            return []
        }
    }
}

/// The candidates for one word, and what pressing Tab does with them.
public struct Completion: Sendable, Hashable {
    /// The part of the word already typed.
    public var partial: String
    /// Whole words that start with `partial` (without regard to case), sorted.
    public var candidates: [String]

    /// What Tab does to the line.
    public enum Action: Sendable, Hashable {
        /// Nothing fits: ring the bell.
        case none
        /// Replace the typed part (`deleting` characters before the cursor) with `insert`.
        case replace(deleting: Int, insert: String)
        /// Several fit and typing cannot go further: show them.
        case list([String])
    }

    public var action: Action {
        guard let first = candidates.first else { return .none }
        if candidates.count == 1 {
            // A word that ends in ':' or '=' wants its value next, not a space.
            let finished = first.hasSuffix(":") || first.hasSuffix("=") ? first : first + " "
            return .replace(deleting: partial.count, insert: finished)
        }
        let common = candidates.dropFirst().reduce(first) { prefix, word in
            String(zip(prefix, word).prefix { $0 == $1 }.map(\.0))
        }
        if common.count > partial.count { return .replace(deleting: partial.count, insert: common) }
        return .list(candidates)
    }
}
