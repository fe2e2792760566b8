import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `export` against a real server: every membership it holds written as JSON lines to a file (mode
/// 0600, put in place only once complete) or to standard output, with the audit trail on request, the
/// change the copy is as of, and what a failure leaves: no file, a clear message, a non-zero status.
@Suite struct ExportTests {
    /// The lines of an export, each parsed.
    func lines(_ text: String) throws -> [JSONValue] {
        try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
    }

    /// The entries of `directory`, sorted.
    func entries(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// Grants `count` memberships through the client, to 25 users (and a device for every tenth), so
    /// that a server holds more than one page's worth; returns the client's connection.
    func grant(_ count: Int, on server: RunningEntitled) throws -> EntitledConnection {
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        for index in 0..<count {
            let answer = try connection.send(
                .grant(user: "user_\(index % 25)", device: index % 10 == 0 ? "device_\(index)" : nil, product: "prod_\(index % 3)")
            )
            #expect(answer.isOK, "\(answer.line)")
        }
        return connection
    }

    @Test func exportToAFileWritesEveryMembershipTheServerHoldsInPagesOnOneConnection() throws {
        let server = try RunningEntitled()
        let connection = try grant(250, on: server)
        let file = server.directory.path + "/exports/all.jsonl"
        try FileManager.default.createDirectory(atPath: server.directory.path + "/exports", withIntermediateDirectories: false)

        let run = try ConsoleRun.run(["--port", String(server.port), "export", "to", file, "limit=50"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput == "exported 250 memberships as of change 250 to \(file); the change feed continues after it: changes after=250\n")

        let written = try lines(try String(contentsOfFile: file, encoding: .utf8))
        #expect(written.count == 251)
        #expect(written.first?["export"]?["seq"]?.intValue == 250)
        #expect(written.first?["export"]?["time"]?.stringValue != nil)
        #expect(written.first?["entitlements"] == .object([]))
        let exported = written.dropFirst().compactMap { $0["membership"]?["id"]?.stringValue }
        #expect(exported.count == 250)
        // What the server lists, subject by subject, is what the export holds: each membership once.
        var listed: Set<String> = []
        for user in 0..<25 { listed.formUnion(try connection.allMemberships(user: "user_\(user)").map(\.id)) }
        #expect(listed.count == 250)
        #expect(Set(exported) == listed)
        #expect(Set(exported).count == exported.count)
        // Nobody else on the machine reads it, and no temporary file is left beside it.
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try entries(server.directory.path + "/exports") == ["all.jsonl"])
    }

    @Test func withHistoryTheFileHoldsEveryAuditEntryAfterItsMemberships() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let script = "define pro prod_0\n" + (0..<12).map { "grant user:u\($0) prod_0 reason=welcome" }.joined(separator: "\n") + "\n"
        #expect(try ConsoleRun.run(port, input: script).status == 0)
        let revoke = try ConsoleRun.run(port + ["--json", "show", "user:u3"])
        let id = try #require(revoke.standardOutput.firstMatch(of: /"id":"(mem_[0-9a-z]+)"/)?.1)
        #expect(try ConsoleRun.run(port + ["--yes", "revoke", String(id), "refund"]).status == 0)

        let file = server.directory.path + "/with-history.jsonl"
        let run = try ConsoleRun.run(port + ["export", "history", "limit=5", "to", file])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(
            run.standardOutput
                == "exported 12 memberships and 14 history entries as of change 14 to \(file); the change feed continues after it: changes after=14\n"
        )
        let written = try lines(try String(contentsOfFile: file, encoding: .utf8))
        #expect(written.first?["entitlements"]?["pro"] == .array([.string("prod_0")]))
        let history = written.compactMap { $0["history"] }
        #expect(history.count == 14)
        #expect(history.filter { $0["action"]?.stringValue == "grant" }.count == 12)
        #expect(history.contains { $0["action"]?.stringValue == "define" })
        #expect(history.contains { $0["action"]?.stringValue == "revoke" && $0["membership"]?["id"]?.stringValue == String(id) })
        // Each membership's entries come after the membership, on its page.
        let firstLine = { (membership: String) in written.firstIndex { $0["membership"]?["id"]?.stringValue == membership } }
        for (index, entry) in written.enumerated() {
            guard let membership = entry["history"]?["membership"]?["id"]?.stringValue else { continue }
            #expect((firstLine(membership) ?? Int.max) < index)
        }
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func withoutAFileTheLinesGoToStandardOutputAndTheSummaryToStandardError() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        _ = try grant(3, on: server)
        let run = try ConsoleRun.run(port + ["export", "limit=2"])
        #expect(run.status == 0)
        let written = try lines(run.standardOutput)
        #expect(written.count == 4)
        #expect(written.first?["export"]?["seq"]?.intValue == 3)
        #expect(written.dropFirst().allSatisfy { $0["membership"]?["id"] != nil })
        #expect(run.standardError == "exported 3 memberships as of change 3; the change feed continues after it: changes after=3\n")
    }

    @Test func theChangeFeedAfterTheExportsChangeHoldsWhatWasWrittenSince() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        _ = try grant(5, on: server)
        let file = server.directory.path + "/copy.jsonl"
        let export = try ConsoleRun.run(port + ["export", "to", file])
        #expect(export.standardOutput.hasSuffix("changes after=5\n"))
        #expect(try ConsoleRun.run(port + ["grant", "user:late", "prod_x"]).status == 0)
        let feed = try ConsoleRun.run(port + ["changes", "after=5"]).standardOutput.split(separator: "\n")
        #expect(feed.count == 3, "\(feed)")
        #expect(feed[1].hasPrefix("6  ") && feed[1].contains("user:late"))
        #expect(feed[2] == "up to date at change 6; later changes: changes after=6")
    }

    @Test func aServerKilledMidwayLeavesNoFileAndExitsTwoSayingHowFarItGot() throws {
        let server = try RunningEntitled()
        _ = try grant(30, on: server)
        let directory = server.directory.path + "/exports"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        try "the export of yesterday\n".write(toFile: directory + "/all.jsonl", atomically: false, encoding: .utf8)
        // The server dies right after answering the export's first page, before the second is asked.
        let relay = try StoppingRelay(serverPort: server.port, after: #""export":"#, .killServer(processIdentifier: server.processIdentifier))

        let run = try ConsoleRun.run(["--port", String(relay.port), "export", "history", "limit=10", "to", directory + "/all.jsonl"])
        relay.waitUntilDone()
        server.kill()
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        #expect(
            run.standardError
                == "error: the export stopped after 1 page (10 memberships): 127.0.0.1:\(relay.port) closed the connection before answering; "
                + "nothing was written to \(directory)/all.jsonl\n",
            "\(run.standardError)"
        )
        // No temporary file is left, and the earlier export is as it was.
        #expect(try entries(directory) == ["all.jsonl"])
        #expect(try String(contentsOfFile: directory + "/all.jsonl", encoding: .utf8) == "the export of yesterday\n")
    }

    @Test func aServerKilledMidwayWhileWritingToStandardOutputSaysTheCopyIsIncomplete() throws {
        let server = try RunningEntitled()
        _ = try grant(30, on: server)
        let relay = try StoppingRelay(serverPort: server.port, after: #""export":"#, .killServer(processIdentifier: server.processIdentifier))
        let run = try ConsoleRun.run(["--port", String(relay.port), "export", "limit=10"])
        relay.waitUntilDone()
        server.kill()
        #expect(run.status == 2)
        #expect(try lines(run.standardOutput).count == 11)
        #expect(
            run.standardError
                == "error: the export stopped after 1 page (10 memberships): 127.0.0.1:\(relay.port) closed the connection before answering; "
                + "the lines written to standard output are an incomplete copy\n"
        )
    }

    @Test func anExportInterruptedWhileWritingLeavesNoFileAndEndsByTheSignal() throws {
        let server = try RunningEntitled()
        _ = try grant(30, on: server)
        let directory = server.directory.path + "/exports"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        // The server answers the first page, and the second never comes: the console waits, as for a
        // large page, until Ctrl-C (or a kill) ends it.
        let relay = try StoppingRelay(serverPort: server.port, after: #""export":"#, .hold)
        // Started through python3 with no signal blocked: a child inherits the test runner's mask, which
        // blocks SIGINT, and an operator's shell blocks none.
        let console = try PseudoTerminal(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: [
                "python3", "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                ConsoleRun.executableURL.path, "--port", String(relay.port), "--timeout", "60", "export", "limit=10", "to", directory + "/all.jsonl",
            ],
            environment: [
                "ENTITLECTL_HISTFILE": "/dev/null", "HOME": server.directory.path,
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ]
        )
        #expect(relay.waitUntilMarkerPassed())
        // The first page is in the temporary file by now, or about to be: either way it is there.
        #expect(try entries(directory).count == 1)
        #expect(try entries(directory).first?.hasPrefix(".all.jsonl.export-") == true)
        kill(console.processIdentifier, SIGINT)
        #expect(try console.waitForExit() == SIGINT)
        #expect(try entries(directory) == [])
        relay.waitUntilDone()
    }

    @Test func anImpossiblePathFailsAtOnceWithStatusTwoAndLeavesNothing() throws {
        let server = try RunningEntitled()
        _ = try grant(2, on: server)
        let port = ["--port", String(server.port)]
        let missing = server.directory.path + "/no/such/directory/x.jsonl"
        let run = try ConsoleRun.run(port + ["export", "to", missing])
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError == "error: cannot write \(missing): cannot create a file in \(server.directory.path)/no/such/directory: no such file or directory\n")
        #expect(!FileManager.default.fileExists(atPath: server.directory.path + "/no"))

        let directory = try ConsoleRun.run(port + ["export", "to", server.directory.path])
        #expect(directory.status == 2)
        #expect(directory.standardError == "error: cannot write \(server.directory.path): it is a directory; name a file in it\n")
    }

    @Test func aRefusedFirstPageExitsOneWithTheServersReason() throws {
        let server = try RunningEntitled.requiringTokens()
        let file = server.directory.path + "/x.jsonl"
        let run = try ConsoleRun.run(server.portOption + ["export", "to", file], environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token])
        #expect(run.status == 1)
        #expect(run.standardError.hasPrefix("error: the server refused the export (forbidden): "), "\(run.standardError)")
        #expect(run.standardError.hasSuffix("; nothing was written to \(file)\n"))
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}
