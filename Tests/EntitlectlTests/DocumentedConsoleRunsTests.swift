import EntitledTestSupport
import Foundation
import Testing

/// CONSOLE.md's one-shot and script examples print today what the document shows: each `$` line is run
/// against a real server (seeded as the document's session left it), and its output must match, with
/// times, relative hints and membership ids masked and runs of spaces taken as one.
@Suite struct DocumentedConsoleRunsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `$` commands of the first indented text block after `marker`, each with the lines shown after it.
    static func runs(after marker: String, in document: String) throws -> [(command: String, shown: [String])] {
        let start = try #require(document.range(of: marker)).upperBound
        let open = try #require(document.range(of: "```text\n", range: start..<document.endIndex))
        let close = try #require(document.range(of: "```", range: open.upperBound..<document.endIndex))
        var runs: [(command: String, shown: [String])] = []
        for line in document[open.upperBound..<close.lowerBound].split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            if text.hasPrefix("$ ") {
                runs.append((String(text.dropFirst(2)), []))
            } else if !runs.isEmpty {
                runs[runs.count - 1].shown.append(text)
            }
        }
        return runs
    }

    /// `text` with what differs from run to run masked: times, relative hints and membership ids.
    static func masked(_ text: String) -> String {
        maskedTimes(text.replacingOccurrences(of: #"mem_(?!0000000000000)[0-9a-z]{13}"#, with: "<id>", options: .regularExpression))
    }

    /// `text` with times and relative hints masked and runs of spaces taken as one (ids kept).
    static func maskedTimes(_ text: String) -> String {
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

    /// Runs one documented command line against the server on `port`: `entitlectl ARGS[; echo $?]` or
    /// `printf '...' | entitlectl`. A port the line names itself (a server that is not there) is replaced
    /// by `closed`, and named as the document names it in what is printed. Returns the lines it printed
    /// (then its status, when echoed).
    static func run(_ command: String, port: Int, closed: Int) throws -> [String] {
        var line = command
        let echoesStatus = line.hasSuffix("; echo $?")
        if echoesStatus { line.removeLast("; echo $?".count) }
        var input = ""
        if line.hasPrefix("printf '") {
            let end = try #require(line.range(of: "' | entitlectl"))
            input = String(line[line.index(line.startIndex, offsetBy: 8)..<end.lowerBound]).replacingOccurrences(of: "\\n", with: "\n")
            line = "entitlectl" + line[end.upperBound...]
        }
        var words = line.split(separator: " ").map(String.init)
        #expect(words.first == "entitlectl")
        words.removeFirst()
        // The server of this test, unless the line names a port of its own (a server that is not there).
        var documentedPort: String?
        if let flag = words.firstIndex(of: "--port"), flag + 1 < words.count {
            documentedPort = words[flag + 1]
            words[flag + 1] = String(closed)
        } else {
            words = ["--port", String(port)] + words
        }
        let ran = try ConsoleRun.run(words, input: input)
        var printed = (ran.standardOutput + ran.standardError).split(separator: "\n").map(String.init)
        if let documentedPort { printed = printed.map { $0.replacingOccurrences(of: ":\(closed)", with: ":\(documentedPort)") } }
        if echoesStatus { printed.append(String(ran.status)) }
        return printed
    }

    @Test func theOneShotAndScriptExamplesPrintWhatTheDocumentShows() throws {
        let document = try String(contentsOf: Self.root.appendingPathComponent("Protocol/CONSOLE.md"), encoding: .utf8)
        let runs = try Self.runs(after: "- **One-shot:**", in: document) + Self.runs(after: "- **Scripts:**", in: document)
        #expect(runs.count >= 5)
        let server = try RunningEntitled()
        let port = String(server.port)
        // Where the document's session left alice: pro through a yearly product until 2027-12-31.
        #expect(try ConsoleRun.run(["--port", port, "define", "pro", "prod_pro_monthly", "prod_pro_yearly"]).status == 0)
        #expect(try ConsoleRun.run(["--port", port, "grant", "user:alice", "prod_pro_yearly", "until", "2027-12-31", "source=stripe"]).status == 0)
        for run in runs {
            // Bound, not listening: refused, and no other test's server can take it meanwhile.
            let closed = try SilentListener(listening: false)
            let printed = try Self.run(run.command, port: server.port, closed: closed.port).map(Self.masked)
            let shown = run.shown.map(Self.masked)
            #expect(printed == shown, "$ \(run.command)\nshown:\n\(shown.joined(separator: "\n"))\nprinted:\n\(printed.joined(separator: "\n"))")
        }
    }
}
