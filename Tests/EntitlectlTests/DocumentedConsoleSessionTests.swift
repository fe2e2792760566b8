import EntitledTestSupport
import Foundation
import Testing

/// CONSOLE.md's first block, the interactive session, is what the console draws today: each prompt line is
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

    static func session(in document: String) throws -> [Step] {
        let open = try #require(document.range(of: "```text\n"))
        let close = try #require(document.range(of: "```", range: open.upperBound..<document.endIndex))
        var steps: [Step] = []
        for line in document[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(prompt) {
                steps.append(Step(typed: String(line.dropFirst(prompt.count)), shown: []))
            } else if !steps.isEmpty, !line.isEmpty {
                steps[steps.count - 1].shown.append(String(line))
            }
        }
        return steps
    }

    /// `text` with times and relative hints masked and runs of spaces taken as one.
    static func masked(_ text: String) -> String {
        var result = text
        for (pattern, replacement) in [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z"#, "<time>"),
            (#"\((in [^)]*|just now|[^)]* ago)\)"#, "(<relative>)"),
            (#" +"#, " "),
        ] {
            result = result.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return result.trimmingCharacters(in: .whitespaces)
    }

    static func ids(in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: #"mem_[0-9a-z]{13}"#)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        }
    }

    @Test func theInteractiveSessionDrawsWhatTheDocumentShows() throws {
        let document = try String(contentsOf: DocumentedConsoleRunsTests.root.appendingPathComponent("Protocol/CONSOLE.md"), encoding: .utf8)
        let steps = try Self.session(in: document)
        #expect(steps.count >= 15)
        #expect(steps.last?.typed == "quit")
        let server = try RunningEntitled()
        let terminal = try PseudoTerminal.console(server)
        let prompt = "127.0.0.1:\(server.port)> "
        try terminal.waitFor(prompt)
        // The document's ids, as the server made them.
        var realID: [String: String] = [:]
        func real(_ text: String) -> String {
            realID.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        for step in steps {
            if step.typed == "quit" {
                try terminal.type("quit\r")
                #expect(try terminal.waitForExit() == 0)
                break
            }
            if step.typed.hasSuffix("<Tab>") {
                // Tab lists the candidates below the line, sorted (so in the order of the ids this run made),
                // and draws the line again; Ctrl-U then clears it for the next step.
                let partial = real(String(step.typed.dropLast("<Tab>".count)))
                try terminal.type(partial + "\t")
                let drawn = try terminal.waitFor("\n" + prompt + partial)
                let listed = Self.ids(in: String(drawn.drop { $0 != "\n" }))
                let documented = step.shown.flatMap(Self.ids(in:)).map(real)
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
            let shown = step.shown.map { Self.masked(real($0)) }
            #expect(
                printed.map(Self.masked) == shown,
                "\(step.typed)\nshown:\n\(shown.joined(separator: "\n"))\nprinted:\n\(printed.map(Self.masked).joined(separator: "\n"))"
            )
        }
    }
}
