import Configuration
import NIOConcurrencyHelpers

/// Where each setting's value came from, as swift-configuration reports every lookup to its access
/// reporter: which provider answered, under which name (`ENTITLED_PORT`), or which one failed to convert.
///
/// What lets an error about a value that the operator did not type say where it is: `--port must be between
/// 0 and 65535, not 70000` followed by `Note: --port came from the configuration file /etc/entitled.json.`
public final class SettingOrigins: AccessReporter, Sendable {
    /// The name the command line's `InMemoryProvider` is given: a value from it needs no note.
    public static let commandLineName = "the command line"

    /// The `providerName` of the command line's provider, and of the file's with the file's description.
    private let commandLineProvider: String
    private let fileProvider: (name: String, origin: String)?
    private let keys: [SettingKey]

    public init(commandLineProvider: String, fileProvider: (name: String, origin: String)?, table: SettingTable) {
        self.commandLineProvider = commandLineProvider
        self.fileProvider = fileProvider
        self.keys = table.keys
    }

    /// What one lookup found.
    public enum Outcome: Sendable, Hashable {
        /// No source gave the key: the built-in default holds.
        case unset
        /// Typed on the command line.
        case commandLine
        /// From the environment variable or the configuration file this names.
        case given(origin: String)
        /// The source of this name has the key but its text is not of the key's type.
        case unconvertible(origin: String)
    }

    private let outcomes = NIOLockedValueBox<[String: Outcome]>([:])

    public func report(_ event: AccessEvent) {
        // The providers in precedence order, up to the first that answered (with a value or an error).
        var outcome = Outcome.unset
        for provider in event.providerResults {
            switch provider.result {
            case .failure:
                // Only the environment converts text when asked (the file's values are typed when it is read).
                outcome = .unconvertible(origin: provider.providerName)
            case .success(let lookup):
                guard lookup.value != nil else { continue }
                if provider.providerName == commandLineProvider {
                    outcome = .commandLine
                } else if let fileProvider, provider.providerName == fileProvider.name {
                    outcome = .given(origin: fileProvider.origin)
                } else {
                    // The environment's provider: its encoded key is the variable's name, `ENTITLED_PORT`.
                    outcome = .given(origin: lookup.encodedKey)
                }
            }
            if outcome != .unset { break }
        }
        if event.conversionError != nil, case .given(let origin) = outcome {
            outcome = .unconvertible(origin: origin)
        }
        let key = event.metadata.key.description
        outcomes.withLockedValue { $0[key] = outcome }
    }

    /// What the last lookup of `key` found.
    public func outcome(of key: SettingKey) -> Outcome {
        outcomes.withLockedValue { $0[AbsoluteConfigKey(key.configKey).description] } ?? .unset
    }

    /// The options a message names that got their value from somewhere other than the command line, with
    /// where: `--port came from ENTITLED_PORT`. `nil` when there are none.
    public func explanation(of message: String) -> String? {
        let named = keys.compactMap { key -> String? in
            guard case .given(let origin) = outcome(of: key) else { return nil }
            // The option followed by what ends its name in a message, so `--socket` does not match `--socket-mode`.
            let mentioned = [" ", "'", "=", ":", ",", ".", "\n"].contains { message.contains(key.option + $0) } || message.hasSuffix(key.option)
            return mentioned ? "\(key.option) came from \(origin)" : nil
        }
        return named.isEmpty ? nil : named.joined(separator: "; ")
    }
}
