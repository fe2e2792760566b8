import EntitledTestSupport
import Foundation
import Testing

/// OPERATIONS.md's synopsis of `entitled` names exactly the flags the binary's own `--help` lists, and its
/// flag tables describe each of them: a flag added to the command cannot be left out of the document again.
@Suite struct DocumentedFlagsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every `--flag` in `text`.
    static func flags(in text: some StringProtocol) -> Set<String> {
        let expression = try! NSRegularExpression(pattern: #"--[a-z][a-z0-9-]*"#)
        let string = String(text)
        return Set(expression.matches(in: string, range: NSRange(string.startIndex..., in: string)).compactMap { match in
            Range(match.range, in: string).map { String(string[$0]) }
        })
    }

    @Test func theSynopsisAndTheFlagTablesNameEveryFlagOfHelpAndNoOther() throws {
        let (status, help) = try ServerProcess.runToCompletion("entitled", ["--help"])
        #expect(status == 0)
        let helped = Self.flags(in: help).subtracting(["--help", "--version"])
        #expect(helped.count > 20, "\(help)")

        let document = try String(contentsOf: Self.root.appendingPathComponent("Protocol/OPERATIONS.md"), encoding: .utf8)
        let section = try #require(document.range(of: "## Running it"))
        let blockStart = try #require(document.range(of: "```text\n", range: section.upperBound..<document.endIndex))
        let blockEnd = try #require(document.range(of: "```", range: blockStart.upperBound..<document.endIndex))
        let synopsis = Self.flags(in: document[blockStart.upperBound..<blockEnd.lowerBound])
        #expect(synopsis.subtracting(helped).isEmpty, "in the synopsis but not in --help: \(synopsis.subtracting(helped).sorted())")
        #expect(helped.subtracting(synopsis).isEmpty, "in --help but not in the synopsis: \(helped.subtracting(synopsis).sorted())")

        // Each flag has a row of its own in a flag table (the standalone one or the cluster one).
        let tableRows = document.split(separator: "\n").filter { $0.hasPrefix("| `--") }
        let described = Set(tableRows.flatMap { row in Self.flags(in: row.split(separator: "|").first ?? "") })
        #expect(helped.subtracting(described).isEmpty, "no table row for: \(helped.subtracting(described).sorted())")
    }
}
