import EntitledTestSupport
import Foundation
import Testing

/// `entitlectl webhooks` against entitled-stores' webhook admin routes: real `entitled` and
/// `entitled-stores serve --webhooks` processes with the webhook receiver of EntitledStoresTests' fixtures,
/// and, for given-up messages (which the real deliverer makes only after a retry period of a day or more),
/// a stand-in serving the documented JSON.
@Suite("entitlectl webhooks", .serialized)
struct WebhooksCommandTests {
    static let secret = "whsec_" + Data("entitled webhook test secret 1".utf8).base64EncodedString()
    static let adminToken = "webhook-admin-token-0123456789"

    /// The admin token in a file of mode 0600 (so entitlectl does not warn about it).
    static func tokenFile(in directory: TemporaryDirectory, token: String = adminToken) throws -> String {
        let path = directory.path + "/admin.token"
        try (token + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// entitled, the receiver and entitled-stores delivering to it as endpoint `crm` (grants only).
    struct Deliveries {
        let entitled: RunningEntitled
        let receiver: PythonServer
        let stores: RunningStores
        let directory: TemporaryDirectory
        let tokenPath: String

        init() throws {
            entitled = try RunningEntitled()
            receiver = try PythonServer.webhookReceiver(secret: WebhooksCommandTests.secret)
            directory = try TemporaryDirectory()
            tokenPath = try WebhooksCommandTests.tokenFile(in: directory)
            let endpoints: [[String: Any]] = [
                ["name": "crm", "url": receiver.url + "/in", "secrets": [WebhooksCommandTests.secret], "start": "oldest", "actions": ["grant"]]
            ]
            let file = directory.path + "/webhooks.json"
            try JSONSerialization.data(withJSONObject: ["admin-token-file": tokenPath, "endpoints": endpoints]).write(to: URL(fileURLWithPath: file))
            stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--webhooks", file])
        }

        /// `entitlectl --stores URL --stores-token-file FILE arguments...`.
        func console(_ arguments: [String], tokenFile: String? = nil) throws -> ConsoleRun {
            try ConsoleRun.run(["--stores", "http://127.0.0.1:\(stores.port)", "--stores-token-file", tokenFile ?? tokenPath] + arguments)
        }

        /// Grants one membership to each of `users`, through a script of the console.
        func grant(_ users: [String]) throws {
            let script = users.map { "grant user:\($0) prod_pro\n" }.joined()
            let ran = try ConsoleRun.run(["--port", String(entitled.port)], input: script)
            #expect(ran.status == 0, "\(ran.standardError)")
        }

        /// Runs `webhooks` until its output satisfies `condition` (at most 20 s); returns the last run.
        func waitForList(_ what: String, _ condition: (String) -> Bool) throws -> ConsoleRun {
            let deadline = ContinuousClock.now + .seconds(20)
            var ran = try console(["webhooks"])
            while !condition(ran.standardOutput), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.1)
                ran = try console(["webhooks"])
            }
            #expect(condition(ran.standardOutput), "never: \(what)\n\(ran.standardOutput)\(ran.standardError)")
            return ran
        }

        /// The ids of the distinct messages the receiver took, waiting (at most 30 s) until there are `count`.
        func distinctDeliveries(atLeast count: Int) throws -> Set<String> {
            let deadline = ContinuousClock.now + .seconds(30)
            var ids = Set<String>()
            repeat {
                ids = Set((try receiver.state()["deliveries"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
                if ids.count >= count { return ids }
                Thread.sleep(forTimeInterval: 0.05)
            } while ContinuousClock.now < deadline
            Issue.record("the receiver took \(ids.count) distinct messages, not \(count)")
            return ids
        }
    }

    /// The row of endpoint `name` in the output of `webhooks`, its columns split on runs of spaces.
    static func row(_ name: String, in output: String) -> [String]? {
        output.split(separator: "\n").map { $0.split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) } }
            .first { $0.first == name }
    }

    @Test func webhooksListsTheEndpointWithItsLagAndResumeBringsBackOneSetAsideAfterA410() throws {
        let setup = try Deliveries()
        try setup.receiver.post("/state", json: ["fail_next": ["status": 410, "count": 1]])
        try setup.grant(["c0", "c1", "c2", "c3", "c4"])

        let listed = try setup.waitForList("crm set aside") { $0.contains("set aside since") }
        #expect(listed.status == 0)
        let lines = listed.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true) == [
            "NAME", "URL", "LAG", "QUEUED", "DELIVERED", "FAILED", "RETRIED", "STATE",
        ])
        let row = try #require(Self.row("crm", in: listed.standardOutput))
        #expect(row[1] == setup.receiver.url + "/in")
        #expect(Int(row[2]) ?? 0 >= 1, "the lag: \(row)")
        #expect(row.last?.hasPrefix("set aside since ") == true && row.last?.contains("410") == true, "\(row)")

        // --json: the routes' JSON as received.
        let json = try setup.console(["--json", "webhooks"])
        let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        let endpoint = try #require((object?["endpoints"] as? [[String: Any]])?.first)
        #expect(endpoint["name"] as? String == "crm" && endpoint["setAside"] != nil)

        // Resuming lets delivery go on: not a removal, so one-shot it needs no --yes (and takes it).
        let resumed = try setup.console(["webhooks", "resume", "crm"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(resumed.standardOutput.hasPrefix("resumed crm\n"), "\(resumed.standardOutput)")
        #expect(try setup.distinctDeliveries(atLeast: 5).count == 5)
        let caughtUp = try setup.waitForList("crm caught up") { Self.row("crm", in: $0)?[2] == "0" }
        #expect(Self.row("crm", in: caughtUp.standardOutput)?.last == "delivering")

        let detail = try setup.console(["webhooks", "crm"])
        #expect(detail.status == 0)
        #expect(detail.standardOutput.contains("state:      delivering"), "\(detail.standardOutput)")
        #expect(detail.standardOutput.hasSuffix("(no given-up messages)\n"), "\(detail.standardOutput)")
        _ = setup.stores.stopAndReadLog()
    }

    @Test func anUnknownEndpointShowsEntitledStoresReasonWithStatus1() throws {
        let setup = try Deliveries()
        let resumed = try setup.console(["--yes", "webhooks", "resume", "nobody"])
        #expect(resumed.status == 1)
        #expect(resumed.standardError == "error: http://127.0.0.1:\(setup.stores.port): no webhook endpoint is named nobody; the endpoints are crm\n")
        let shown = try setup.console(["webhooks", "nobody"])
        #expect(shown.status == 1)
        #expect(shown.standardError == "error: http://127.0.0.1:\(setup.stores.port): no webhook endpoint nobody; its endpoints are crm\n")
    }

    @Test func aWrongOrMissingAdminTokenIsAClearErrorWithStatus2() throws {
        let setup = try Deliveries()
        let wrongDirectory = try TemporaryDirectory()
        let wrongPath = try Self.tokenFile(in: wrongDirectory, token: "not-the-token")
        let wrong = try setup.console(["webhooks"], tokenFile: wrongPath)
        #expect(wrong.status == 2)
        #expect(
            wrong.standardError
                == "error: http://127.0.0.1:\(setup.stores.port) refused the admin token from the token file \(wrongPath) (401): it must be the token of the webhooks file's admin-token-file\n"
        )
        #expect(!wrong.standardError.contains("not-the-token"))

        let missing = try ConsoleRun.run(["--stores", "http://127.0.0.1:\(setup.stores.port)", "webhooks"])
        #expect(missing.status == 2)
        #expect(missing.standardError.hasPrefix("error: the webhook admin routes of http://127.0.0.1:\(setup.stores.port) need the admin token: give its file with --stores-token-file PATH"))

        // ENTITLECTL_STORES_TOKEN works where no file is given.
        let fromEnvironment = try ConsoleRun.run(
            ["--stores", "http://127.0.0.1:\(setup.stores.port)", "webhooks"], environment: ["ENTITLECTL_STORES_TOKEN": Self.adminToken]
        )
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.standardError)")
        #expect(Self.row("crm", in: fromEnvironment.standardOutput) != nil)
    }

    @Test func nothingListeningIsNamedWithTheCommandToStart() throws {
        let closed = try SilentListener(listening: false)
        let directory = try TemporaryDirectory()
        let started = ContinuousClock.now
        let ran = try ConsoleRun.run(["--stores", "http://127.0.0.1:\(closed.port)", "--stores-token-file", try Self.tokenFile(in: directory), "webhooks"])
        // At once, not after the connect timeout (10 s).
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(ran.status == 2)
        #expect(
            ran.standardError
                == "error: cannot reach entitled-stores at http://127.0.0.1:\(closed.port) (connection refused): is entitled-stores serve --webhooks running there? Name its address with --stores URL\n"
        )
    }

    @Test func anEndpointInDetailListsItsGivenUpMessagesAndRedeliverSendsOneAgain() throws {
        let admin = try FakeWebhookAdmin.start(token: Self.adminToken)
        let directory = try TemporaryDirectory()
        let token = try Self.tokenFile(in: directory)
        func console(_ arguments: [String]) throws -> ConsoleRun {
            try ConsoleRun.run(["--stores", admin.url, "--stores-token-file", token] + arguments)
        }

        let listed = try console(["webhooks"])
        #expect(listed.status == 0)
        #expect(Self.row("crm", in: listed.standardOutput) == ["crm", "https://crm.example.com/in", "2", "2", "117", "2", "31", "delivering, given up 2"])
        let billing = try #require(Self.row("billing", in: listed.standardOutput))
        #expect(billing.last?.hasPrefix("set aside since 2026-11-21T08:00:00.000Z (") == true && billing.last?.hasSuffix("): HTTP 410 Gone") == true)

        let detail = try console(["webhooks", "crm"])
        #expect(detail.status == 0)
        let lines = detail.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("lag:        2 (delivered up to change 118 of 120)"), "\(detail.standardOutput)")
        #expect(lines.contains("queued:     2 (1 in flight)"))
        let header = try #require(lines.firstIndex { $0.hasPrefix("ID ") })
        #expect(lines[header].split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) } == [
            "ID", "TYPE", "SEQ", "ATTEMPTS", "LAST RESULT", "FIRST TRIED", "GAVE UP",
        ])
        #expect(lines[header + 1].hasPrefix("msg_a  membership.updated  57   14        HTTP 500     2026-11-20T07:00:00.000Z ("), "\(lines[header + 1])")
        #expect(lines.last == "send one again with: webhooks redeliver crm msg_a")

        let json = try console(["--json", "webhooks", "crm"])
        let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        #expect(object?["name"] as? String == "crm" && (object?["givenUp"] as? [Any])?.count == 2)

        let taken = try console(["webhooks", "redeliver", "crm", "msg_a"])
        #expect(taken.status == 0, "\(taken.standardError)")
        #expect(taken.standardOutput == "redelivered: crm took msg_a: delivered (HTTP 200)\n")
        #expect(try console(["webhooks", "crm"]).standardOutput.contains("msg_a") == false)

        let refused = try console(["webhooks", "redeliver", "crm", "msg_b"])
        #expect(refused.status == 1)
        #expect(refused.standardError == "not delivered: crm did not take msg_b: HTTP 500; it stays given up\n")

        let unknown = try console(["webhooks", "redeliver", "crm", "msg_z"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError == "error: \(admin.url): endpoint crm has given up no message msg_z\n")
    }
}
