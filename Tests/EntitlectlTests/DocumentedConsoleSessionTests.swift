import EntitledTestSupport
import Foundation
import Testing

/// CONSOLE.md's interactive sessions (its first block, and the examples in its notes) are what the console
/// draws today: each prompt line is
/// typed into `entitlectl` on a real pseudo-terminal against a real, empty server (Tab and the `y/N`
/// answer included), and what it prints before the next prompt must be what the document shows, with the
/// document's membership ids taken as the ones the server made (in the order they first appear), times
/// and relative hints masked, and runs of spaces taken as one.
@Suite struct DocumentedConsoleSessionTests {
    /// One typed line of the session: what follows the prompt, and the lines shown after it until the next.
    struct Step {
        var typed: String
        var shown: [String]
    }

    static let prompt = "127.0.0.1:7117> "

    /// The prompt lines of every text block that shows an interactive session (the first block, and those
    /// in the notes, indented under a bullet), in the document's order, with what each shows after it.
    static func session(in document: String) throws -> [Step] {
        var steps: [Step] = []
        var searchFrom = document.startIndex
        while let open = document.range(of: "```text\n", range: searchFrom..<document.endIndex) {
            let close = try #require(document.range(of: "```", range: open.upperBound..<document.endIndex))
            searchFrom = close.upperBound
            let lines = document[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            // The block's indentation is its first line's: a block under a bullet is indented by two spaces.
            let indentation = lines.first.map { $0.prefix { $0 == " " }.count } ?? 0
            let unindented = lines.map { String($0.dropFirst(min(indentation, $0.prefix { $0 == " " }.count))) }
            guard unindented.first?.hasPrefix(prompt) == true else { continue }
            for line in unindented {
                if line.hasPrefix(prompt) {
                    steps.append(Step(typed: String(line.dropFirst(prompt.count)), shown: []))
                } else if !steps.isEmpty, !line.isEmpty {
                    steps[steps.count - 1].shown.append(line)
                }
            }
        }
        return steps
    }

    /// `text` with times and relative hints masked and runs of spaces taken as one (ids are mapped, not masked).
    static func masked(_ text: String) -> String { DocumentedConsoleRunsTests.maskedTimes(text) }

    static func ids(in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: #"mem_[0-9a-z]{13}"#)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        }
    }

    /// The page cursors a `more: ... after=CURSOR` line offers.
    static func cursors(in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: #"after=(\S+)"#)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test func theInteractiveSessionDrawsWhatTheDocumentShows() throws {
        let document = try String(contentsOf: DocumentedConsoleRunsTests.root.appendingPathComponent("Protocol/CONSOLE.md"), encoding: .utf8)
        let steps = try Self.session(in: document)
        #expect(steps.count >= 19)
        #expect(steps.contains { $0.typed == "quit" })
        #expect(steps.contains { $0.typed.hasPrefix("extend ") })
        let server = try RunningEntitled()
        let terminal = try PseudoTerminal.console(server)
        let prompt = "127.0.0.1:\(server.port)> "
        try terminal.waitFor(prompt)
        // The document's ids, as the server made them, and its page cursors (which hold an id and a time),
        // as the server gave them: the ids are mapped first, so a cursor is known by its mapped text.
        var realID: [String: String] = [:]
        var realCursor: [String: String] = [:]
        func real(_ text: String) -> String {
            let ids = realID.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
            return realCursor.reduce(ids) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        for step in steps {
            // The first session quits; the blocks after it go on in the same console, which quits at the end.
            if step.typed == "quit" { continue }
            if step.typed.hasSuffix("<Tab>") {
                // Tab lists the candidates below the line, sorted (so in the order of the ids this run made),
                // and draws the line again; Ctrl-U then clears it for the next step.
                let partial = real(String(step.typed.dropLast("<Tab>".count)))
                let documented = step.shown.flatMap(Self.ids(in:)).map(real)
                // The ids this run made may share more than the typed word (about one run in 32 shares the
                // character after "mem_"): then the first Tab completes that common part, and a second lists.
                let word = partial.split(separator: " ").last.map(String.init) ?? ""
                let common = documented.dropFirst().reduce(documented.first ?? "") { String($0.commonPrefix(with: $1)) }
                let line = common.count > word.count ? String(partial.dropLast(word.count)) + common : partial
                try terminal.type(partial + (line == partial ? "\t" : "\t\t"))
                let drawn = try terminal.waitFor("\n" + prompt + line)
                let listed = Self.ids(in: String(drawn.drop { $0 != "\n" }))
                #expect(listed == documented.sorted(), "\(step.typed): listed \(listed), the document lists \(documented)")
                #expect(step.shown.count == 1)
                try terminal.type("\u{15}")
                continue
            }
            try terminal.type(real(step.typed) + "\r")
            var drawn = ""
            if step.shown.contains(where: { $0.hasSuffix("[y/N] y") }) {
                drawn = try terminal.waitFor("[y/N] ")
                try terminal.type("y\r")
            }
            drawn += try terminal.waitFor(prompt)
            // What the command printed: after the line typed (its echo ends at the first newline), up to the prompt.
            let output = drawn.drop { $0 != "\n" }.dropFirst().dropLast(prompt.count)
            let printed = output.split(separator: "\n").map(String.init)
            // Learn the ids the document's output names from the same places in what was printed.
            for (documented, made) in zip(step.shown.flatMap(Self.ids(in:)), printed.flatMap(Self.ids(in:))) where realID[documented] == nil {
                realID[documented] = made
            }
            for (documented, made) in zip(step.shown.flatMap(Self.cursors(in:)), printed.flatMap(Self.cursors(in:))) {
                realCursor[real(documented)] = made
            }
            let shown = step.shown.map { Self.masked(real($0)) }
            #expect(
                printed.map(Self.masked) == shown,
                "\(step.typed)\nshown:\n\(shown.joined(separator: "\n"))\nprinted:\n\(printed.map(Self.masked).joined(separator: "\n"))"
            )
        }
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
    }
}
