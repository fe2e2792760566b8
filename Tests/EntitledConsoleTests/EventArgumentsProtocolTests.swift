import EntitledConsole
import Foundation
import Testing

/// The console's event rules (`EventArguments`) restate the server's; both follow the table of
/// Protocol/PROTOCOL.md, "Lifecycle events". This reads that table and holds the console to it, so that a
/// rule changed in the server and its documentation but not in the console fails here.
@Suite struct EventArgumentsProtocolTests {
    /// What the table says of one wire field for one event type.
    enum Rule: Equatable { case required, optional, refused }

    /// A wire field of the table and the console argument that sends it.
    static let arguments: [(field: String, argument: String)] = [
        ("expiresAt", "until 2027-01-01"), ("gracePeriodExpiresAt", "grace=2027-02-01"), ("product", "product=p2"),
    ]

    /// The rows of the table: each event type and its rule for each field of `arguments`.
    static func documentedRules() throws -> [String: [String: Rule]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Protocol/PROTOCOL.md"), encoding: .utf8)
        // The table of event types: the rows after its header and separator, up to the first other line.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| `type` | Fields |") })
        var rules: [String: [String: Rule]] = [:]
        for line in lines[(header + 2)...].prefix(while: { $0.hasPrefix("|") }) {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let type = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            var row: [String: Rule] = [:]
            for (field, _) in arguments {
                row[field] =
                    cells[2].contains("`\(field)` required") ? .required : cells[2].contains("`\(field)` optional") ? .optional : .refused
            }
            rules[type] = row
        }
        return rules
    }

    @Test func theConsoleKnowsExactlyTheDocumentedEventTypes() throws {
        let documented = try Self.documentedRules()
        #expect(Set(documented.keys) == Set(CommandSpec.eventTypes))
    }

    @Test func eachTypeNeedsTakesAndRefusesTheArgumentsTheProtocolSays() throws {
        for (type, row) in try Self.documentedRules() {
            // The arguments the type requires, so that each line below fails (or not) for one reason only.
            let needed = Self.arguments.filter { row[$0.field] == .required }
            for (field, argument) in Self.arguments {
                let others = needed.filter { $0.field != field }.map(\.argument)
                let without = line(type, others)
                let with = line(type, others + [argument])
                switch row[field] {
                case .required:
                    #expect(usageError(without) != nil, "\(without): \(field) is required")
                    #expect(usageError(with) == nil, "\(with): \(String(describing: usageError(with)))")
                case .optional:
                    #expect(usageError(without) == nil, "\(without): \(String(describing: usageError(without)))")
                    #expect(usageError(with) == nil, "\(with): \(String(describing: usageError(with)))")
                case .refused, nil:
                    #expect(usageError(without) == nil, "\(without): \(String(describing: usageError(without)))")
                    #expect(usageError(with) != nil, "\(with): \(field) does not apply to \(type)")
                }
            }
        }
    }

    /// An event line with `until` first (it is positional, after the type) and the options after it.
    func line(_ type: String, _ arguments: [String]) -> String {
        let until = arguments.filter { $0.hasPrefix("until") }
        let options = arguments.filter { !$0.hasPrefix("until") }
        return (["event", "mem_x", type] + until + options + ["id=e1"]).joined(separator: " ")
    }
}
