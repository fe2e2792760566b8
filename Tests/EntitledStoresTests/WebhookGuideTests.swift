import Crypto
import EntitledClient
@testable import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// Protocol/WEBHOOKS.md kept honest. Its Node, Go and Python verification snippets are taken from the page as
/// written and run (`node`, `go run`, `python3`) against a message signed by the deliverer's own signer
/// (`HTTPWebhookTransport.signature`): each must accept the genuine message and refuse a tampered body, a wrong
/// secret, another id and a stale timestamp. The Swift snippet is compiled here (below, between the markers) and
/// must be the page's, line for line. The page's example messages must be what `WebhookMessage` makes of their
/// changes, and valid against Protocol/schema/webhook.schema.json (python3's `jsonschema`, as
/// Tools/conformance/run.py validates); its webhooks file example must be accepted; and every metric and admin
/// route it names must be served by a real `entitled-stores serve --webhooks`.
@Suite("The webhooks guide (Protocol/WEBHOOKS.md)")
struct WebhookGuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    // MARK: - The verification snippets

    @Test func theNodeGoAndPythonSnippetsAcceptTheGenuineMessageAndRefuseTamperedWrongKeyedAndStaleOnes() async throws {
        let guide = try Self.guide()
        let cases = try Self.signedCases()
        let directory = try TemporaryDirectory()
        let casesPath = directory.path + "/cases.json"
        try JSONSerialization.data(withJSONObject: cases.map(\.json)).write(to: URL(fileURLWithPath: casesPath))
        let expected = cases.map { "\($0.name) \($0.genuine ? "accepted" : "refused")" }

        let node = try Self.block(in: guide, language: "js", header: "// verify-webhook.js")
        try (node + "\n" + Self.nodeHarness).write(toFile: directory.path + "/verify.cjs", atomically: true, encoding: .utf8)
        let python = try Self.block(in: guide, language: "python", header: "# verify_webhook.py")
        try (python + "\n" + Self.pythonHarness).write(toFile: directory.path + "/verify.py", atomically: true, encoding: .utf8)
        let go = try Self.block(in: guide, language: "go", header: "// verify_webhook.go")
        // The page shows the function in a package of its own; here it joins the harness's `main`.
        let goMain = go.replacing(/(?m)^package \w+$/, with: "package main", maxReplacements: 1)
        #expect(goMain != go, "the Go snippet names its package")
        try goMain.write(toFile: directory.path + "/verify_webhook.go", atomically: true, encoding: .utf8)
        try Self.goHarness.write(toFile: directory.path + "/harness.go", atomically: true, encoding: .utf8)

        let runs: [(tool: String, arguments: [String])] = [
            ("node", ["node", "verify.cjs", casesPath]),
            ("python3", ["python3", "verify.py", casesPath]),
            ("go", ["go", "run", "verify_webhook.go", "harness.go", casesPath]),
        ]
        for (tool, arguments) in runs {
            guard try await Self.isInstalled(tool) else {
                Issue.record("\(tool) is not installed: Tools/test.sh installs nodejs and golang-go, and python3 comes with the system")
                continue
            }
            let run = try await ImportHarness.onThread { try ToolRun(arguments, in: directory.path) }
            #expect(run.status == 0, "\(tool) exited with \(run.status):\n\(run.output)")
            let lines = run.output.split(separator: "\n").map(String.init)
            #expect(lines == expected, "\(tool)'s snippet of WEBHOOKS.md answered:\n\(run.output)")
        }
    }

    @Test func theSwiftSnippetIsTheOneCompiledHereAndAcceptsAndRefusesAlike() throws {
        let guide = try Self.guide()
        let snippet = try Self.block(in: guide, language: "swift", header: "// VerifyWebhook.swift")
        let shown = Self.trimmed(snippet.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().filter { !$0.hasPrefix("import ") })
        let source = try String(contentsOfFile: #filePath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try #require(source.firstIndex { $0.hasPrefix("// BEGIN the Swift snippet of WEBHOOKS.md") })
        let end = try #require(source.firstIndex { $0.hasPrefix("// END the Swift snippet of WEBHOOKS.md") })
        let compiled = Self.trimmed(source[(begin + 1)..<end])
        #expect(shown == compiled, "the Swift block of WEBHOOKS.md and the copy compiled in WebhookGuideTests.swift differ")
        for signed in try Self.signedCases() {
            let accepted = verifyWebhook(
                secret: signed.secret, id: signed.headers["webhook-id"] ?? "", timestamp: signed.headers["webhook-timestamp"] ?? "",
                signatures: signed.headers["webhook-signature"] ?? "", body: Data(signed.body)
            )
            #expect(accepted == signed.genuine, "\(signed.name)")
        }
    }

    @Test func theCasesMeanWhatTheySayToTheProjectsOwnVerifier() throws {
        let now = Int64(Date().timeIntervalSince1970)
        for signed in try Self.signedCases() {
            let verified = (try? StandardWebhookSignature.verify(
                id: signed.headers["webhook-id"], timestamp: signed.headers["webhook-timestamp"], signature: signed.headers["webhook-signature"],
                body: signed.body, secrets: [signed.secret], now: now
            )) != nil
            #expect(verified == signed.genuine, "\(signed.name)")
        }
    }

    // MARK: - The examples

    @Test func theExampleMessagesAreWhatTheDelivererSendsForTheirChanges() throws {
        let guide = try Self.guide()
        // The message as it arrives: the deliverer's own id, body and signature for its change.
        let request = try Self.block(in: guide, language: "http", header: "POST ")
        let parts = request.components(separatedBy: "\n\n")
        try #require(parts.count == 2, "the http block is a head, an empty line and a body")
        var headers: [String: String] = [:]
        for line in parts[0].split(separator: "\n").dropFirst() {
            let field = line.split(separator: ":", maxSplits: 1)
            try #require(field.count == 2, "\(line)")
            headers[field[0].lowercased()] = field[1].trimmingCharacters(in: .whitespaces)
        }
        let body = Array(parts[1].trimmingCharacters(in: .newlines).utf8)
        let message = try Self.message(of: body)
        #expect(message.id == headers["webhook-id"])
        #expect(message.body == body, "the example's body is not what the deliverer writes for its change")
        #expect(headers["content-type"] == "application/json" && headers["user-agent"] == "entitled-stores webhooks")
        let timestamp = try #require(headers["webhook-timestamp"].flatMap { Int64($0) })
        let secret = try #require(guide.split(separator: "### A message as it arrives").last?.firstMatch(of: /whsec_[A-Za-z0-9+\/]{40,}={0,2}/))
        #expect(HTTPWebhookTransport.signature(of: message, timestamp: timestamp, secrets: [String(secret.output)]) == headers["webhook-signature"])
        _ = try StandardWebhookSignature.verify(
            id: headers["webhook-id"], timestamp: headers["webhook-timestamp"], signature: headers["webhook-signature"], body: body,
            secrets: [String(secret.output)], now: timestamp
        )

        // The payloads shown (spread over lines), and the schema's examples: each is the message of its change.
        let shown = try Self.payloadExamples(in: guide)
        #expect(Set(shown.compactMap { $0["type"] as? String }).isSuperset(of: ["membership.grant", "membership.renewal", "person.erase"]))
        let schema = try Self.jsonObject(atPath: Self.root.appendingPathComponent("Protocol/schema/webhook.schema.json").path)
        let examples = try #require(schema["examples"] as? [[String: Any]])
        #expect(examples.count >= 3)
        for payload in shown + examples {
            let text = try JSONSerialization.data(withJSONObject: payload)
            let message = try Self.message(of: Array(text))
            let sent = try #require(try JSONSerialization.jsonObject(with: Data(message.body)) as? NSDictionary)
            #expect(sent == payload as NSDictionary, "\(payload["type"] ?? "?")")
            let data = try #require(payload["data"] as? [String: Any])
            #expect(payload["timestamp"] as? String == data["time"] as? String)
            #expect(message.type == payload["type"] as? String)
            let subject = (data["membership"] as? [String: Any])?["id"] as? String ?? data["action"] as? String ?? "?"
            #expect(message.id == "msg_\(data["sequence"] ?? "?")_\(subject)")
        }
    }

    @Test func thePayloadExamplesAreValidAgainstTheSchemaAndBrokenOnesAreNot() async throws {
        let guide = try Self.guide()
        let schema = try Self.jsonObject(atPath: Self.root.appendingPathComponent("Protocol/schema/webhook.schema.json").path)
        let shown = try Self.payloadExamples(in: guide)
        let examples = try #require(schema["examples"] as? [[String: Any]])
        var cases: [[String: Any]] = []
        for (index, payload) in shown.enumerated() { cases.append(["name": "WEBHOOKS.md example \(index + 1)", "payload": payload, "valid": true]) }
        for (index, payload) in examples.enumerated() { cases.append(["name": "schema example \(index + 1)", "payload": payload, "valid": true]) }
        // Broken ones, so that a schema that takes anything cannot pass.
        let grant = try #require(shown.first { $0["type"] as? String == "membership.grant" })
        func broken(_ name: String, _ change: (inout [String: Any]) -> Void) {
            var payload = grant
            change(&payload)
            cases.append(["name": name, "payload": payload, "valid": false])
        }
        broken("a type that is not the action") { $0["type"] = "membership.renewal" }
        broken("a type of another sender") { $0["type"] = "invoice.paid" }
        broken("no timestamp") { $0["timestamp"] = nil }
        broken("a timestamp with an offset") { $0["timestamp"] = "2026-12-04T17:47:03.610+01:00" }
        broken("an item without its sequence") { payload in
            var data = payload["data"] as? [String: Any] ?? [:]
            data["sequence"] = nil
            payload["data"] = data
        }
        broken("a membership type without a membership") { payload in
            var data = payload["data"] as? [String: Any] ?? [:]
            data["membership"] = nil
            payload["data"] = data
        }

        let directory = try TemporaryDirectory()
        let casesPath = directory.path + "/cases.json"
        try JSONSerialization.data(withJSONObject: cases).write(to: URL(fileURLWithPath: casesPath))
        let python = try await Self.pythonWithJSONSchema()
        let schemaDirectory = Self.root.appendingPathComponent("Protocol/schema").path
        let run = try await ImportHarness.onThread { try ToolRun([python, "-c", Self.schemaValidator, schemaDirectory, casesPath], in: directory.path) }
        #expect(run.status == 0, "the validation failed:\n\(run.output)")
        let answers = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(answers.count == cases.count, "\(run.output)")
        for (answer, asked) in zip(answers, cases) {
            #expect(answer["valid"] as? Bool == asked["valid"] as? Bool, "\(asked["name"] ?? ""): \(answer["error"] ?? "valid")")
        }
    }

    // MARK: - The webhooks file

    @Test func theWebhooksFileExampleIsAcceptedAsDescribedAndTheTablesNameEveryKey() throws {
        let guide = try Self.guide()
        let directory = try TemporaryDirectory()
        let feedToken = directory.path + "/feed.token"
        let adminToken = directory.path + "/admin.token"
        try "an-admin-token-of-entitled-0123\n".write(toFile: feedToken, atomically: true, encoding: .utf8)
        try "webhooks-admin-token-0123456789\n".write(toFile: adminToken, atomically: true, encoding: .utf8)
        let example = try #require(Self.blocks(in: guide).first { $0.language == "json" && $0.text.contains("\"endpoints\": [") }?.text)
        let local = example.replacingOccurrences(of: "/etc/entitled/webhooks-feed.token", with: feedToken)
            .replacingOccurrences(of: "/etc/entitled/webhooks-admin.token", with: adminToken)
        #expect(local != example, "the example names the token files")
        let path = directory.path + "/webhooks.json"
        try local.write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try WebhooksConfiguration.read(path: path)
        #expect(configuration.endpoints.map(\.name) == ["crm", "warehouse"])
        #expect(configuration.feedToken == "an-admin-token-of-entitled-0123" && configuration.adminToken == "webhooks-admin-token-0123456789")
        let crm = configuration.endpoints[0]
        #expect(crm.secrets.count == 2 && crm.filter.actions?.contains("erase") == true)
        #expect(crm.timeout == .seconds(20) && crm.concurrency == 8 && crm.retryPeriod == .seconds(5 * 86_400))
        // The defaults the tables state.
        let warehouse = configuration.endpoints[1]
        #expect(warehouse.timeout == .seconds(15) && warehouse.concurrency == 16 && warehouse.retryPeriod == .seconds(3 * 86_400))
        #expect(warehouse.filter == WebhookFilter())
        #expect(configuration.starts["crm"] == .newest && configuration.starts["warehouse"] == .oldest)

        // The refusal shown is the parser's, word for word.
        let shownError = try #require(Self.blocks(in: guide).first { $0.text.hasPrefix("Error: the webhooks file") }?.text)
        let misspelt = try #require(JSONValue(strictUTF8: Array(local.replacingOccurrences(of: "\"actions\":", with: "\"action\":").utf8))?.objectMembers)
        do throws(WebhooksConfigurationError) {
            _ = try WebhooksConfiguration.parse(misspelt, path: "/etc/entitled/webhooks.json")
            Issue.record("a misspelt key was accepted")
        } catch {
            #expect("Error: " + error.message == shownError.trimmingCharacters(in: .newlines))
        }

        // Both tables of the file's keys, together, name every key the parser takes, and no other.
        let section = try #require(guide.split(separator: "### The webhooks file").last?.split(separator: "\n### ").first)
        let tabled = Set(section.split(separator: "\n").compactMap { line in line.firstMatch(of: /^\| `([a-z-]+)` \|/).map { String($0.output.1) } })
        #expect(tabled == WebhooksConfiguration.fileKeys.union(WebhooksConfiguration.endpointKeys))
    }

    // MARK: - The metrics and the admin routes

    @Test func everyMetricAndAdminRouteTheGuideNamesIsServed() async throws {
        let guide = try Self.guide()
        let entitled = try RunningEntitled()
        let directory = try TemporaryDirectory()
        let token = "webhooks-admin-token-0123456789"
        try (token + "\n").write(toFile: directory.path + "/admin.token", atomically: true, encoding: .utf8)
        let file = directory.path + "/webhooks.json"
        let endpoint: [String: Any] = ["name": "crm", "url": "http://127.0.0.1:9/hooks", "secrets": [WebhookDeliveryTests.secret]]
        try JSONSerialization.data(withJSONObject: ["admin-token-file": directory.path + "/admin.token", "endpoints": [endpoint]])
            .write(to: URL(fileURLWithPath: file))
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--webhooks", file])
        defer { _ = stores.stopAndReadLog() }

        // Every metric named is served, and every webhook metric served is named.
        let named = Set(guide.matches(of: /entitled_stores_webhook_[a-z_]+/).map { String($0.output) })
        let metrics = try stores.get("/metrics").body
        let served = Set(metrics.matches(of: /TYPE (entitled_stores_webhook_[a-z_]+)[ ]/).map { String($0.output.1) })
        #expect(!served.isEmpty && named == served, "named \(named.sorted()), served \(served.sorted())")

        // Every admin route named answers as its own (not the router's "no route" 404).
        let routes = Set(guide.matches(of: /(GET|POST) (\/webhooks[A-Za-z\/]*)/).map { "\($0.output.1) \($0.output.2)" })
        #expect(routes == ["GET /webhooks", "POST /webhooks/NAME/resume", "POST /webhooks/NAME/redeliver/ID"], "\(routes.sorted())")
        let bearer = ["Authorization": "Bearer \(token)"]
        #expect(try stores.get("/webhooks").status == 401)
        let status = try stores.get("/webhooks", headers: bearer)
        #expect(status.status == 200, "\(status.body)")
        let resumed = try stores.post("/webhooks/crm/resume", body: [], headers: bearer)
        #expect(resumed.status == 200, "\(resumed.body)")
        let redelivered = try stores.post("/webhooks/crm/redeliver/msg_1_mem_0000000000000", body: [], headers: bearer)
        #expect(redelivered.status == 404 && redelivered.body.contains("has given up no message"), "\(redelivered.body)")

        // The status fields the page shows cover those served.
        let shownStatus = try #require(Self.blocks(in: guide).first { $0.language == "json" && $0.text.hasPrefix("{\"endpoints\":") }?.text)
        func endpointKeys(_ text: String) throws -> Set<String> {
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            return Set(((object?["endpoints"] as? [[String: Any]])?.first ?? [:]).keys)
        }
        let servedKeys = try endpointKeys(status.body)
        let shownKeys = try endpointKeys(shownStatus)
        #expect(!servedKeys.isEmpty && servedKeys.isSubset(of: shownKeys), "served \(servedKeys.sorted()), shown \(shownKeys.sorted())")
        #expect(try endpointKeys("{\"endpoints\":[\(resumed.body)]}") == servedKeys)
    }

    @Test func everyTestTheGuideCitesExists() throws {
        let guide = try Self.guide()
        let section = try #require(guide.split(separator: "## What is tested").last)
        let cited = section.split(separator: "\n").compactMap { line in line.firstMatch(of: /\| `([A-Za-z.0-9]+)` \|$/).map { String($0.output.1) } }
        #expect(cited.count >= 9)
        let folder = Self.root.appendingPathComponent("Tests/EntitledStoresTests")
        let sources = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
        for name in cited {
            let parts = name.split(separator: ".")
            if parts.count == 2 { #expect(sources.contains("struct \(parts[0])"), "\(name)") }
            let test = String(parts.last ?? "")
            #expect(sources.contains("func \(test)(") || sources.contains("struct \(test)"), "WEBHOOKS.md cites \(name), which no test is")
        }
    }

    // MARK: - Reading the page

    static func guide() throws -> String {
        try String(contentsOf: root.appendingPathComponent("Protocol/WEBHOOKS.md"), encoding: .utf8)
    }

    /// The fenced code blocks of `text`, in order: the fence's language and the lines between the fences.
    static func blocks(in text: String) -> [(language: String, text: String)] {
        var blocks: [(language: String, text: String)] = []
        var open: (language: String, lines: [Substring])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let current = open {
                    blocks.append((current.language, current.lines.joined(separator: "\n")))
                    open = nil
                } else {
                    open = (String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), [])
                }
            } else if open != nil {
                open!.lines.append(line)
            }
        }
        return blocks
    }

    /// The one block of `language` whose first line starts with `header` (the file name the page gives it).
    static func block(in text: String, language: String, header: String) throws -> String {
        let found = blocks(in: text).filter { $0.language == language && $0.text.hasPrefix(header) }
        try #require(found.count == 1, "WEBHOOKS.md has \(found.count) ```\(language) blocks starting with \(header)")
        return found[0].text
    }

    /// The payloads the page shows: its JSON blocks that are objects with `type`, `timestamp` and `data`.
    static func payloadExamples(in text: String) throws -> [[String: Any]] {
        let payloads = blocks(in: text).filter { $0.language == "json" }.compactMap { block -> [String: Any]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(block.text.utf8)) as? [String: Any],
                object["type"] != nil, object["data"] != nil, object["timestamp"] != nil
            else { return nil }
            return object
        }
        try #require(payloads.count >= 3, "WEBHOOKS.md shows \(payloads.count) payloads")
        return payloads
    }

    static func jsonObject(atPath path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// The lines without trailing spaces, and without the empty lines at either end.
    static func trimmed(_ lines: some Collection<Substring>) -> [String] {
        var result = lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }
        while result.first?.isEmpty == true { result.removeFirst() }
        while result.last?.isEmpty == true { result.removeLast() }
        return result
    }

    // MARK: - The messages the snippets are given

    /// The message the deliverer sends for the change feed item in `payload`'s `data`.
    static func message(of payload: [UInt8]) throws -> WebhookMessage {
        let json = try #require(JSONValue(strictUTF8: payload), "not JSON")
        let change = try #require(json["data"].flatMap(FeedChange.init(json:)), "no change feed item in data")
        return WebhookMessage(change)
    }

    /// A request as a receiver gets it, with the secret the receiver holds and whether it is genuine.
    struct SignedCase {
        var name: String
        var secret: String
        var headers: [String: String]
        var body: [UInt8]
        var genuine: Bool

        var json: [String: Any] {
            ["name": name, "secret": secret, "headers": headers, "body": Data(body).base64EncodedString(), "genuine": genuine]
        }
    }

    /// The grant of the page's examples as the deliverer sends it now, signed by its own signer, and what a
    /// receiver must refuse.
    static func signedCases() throws -> [SignedCase] {
        let grant = try #require(try payloadExamples(in: guide()).first { $0["type"] as? String == "membership.grant" })
        let message = try Self.message(of: Array(try JSONSerialization.data(withJSONObject: grant)))
        let old = WebhookDeliveryTests.secret
        let new = WebhookDeliveryTests.newSecret
        let stranger = "whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        let now = Int64(Date().timeIntervalSince1970)
        let stale = now - 600
        func headers(_ id: String, _ timestamp: Int64, _ secrets: [String]) -> [String: String] {
            [
                "webhook-id": id, "webhook-timestamp": String(timestamp),
                "webhook-signature": HTTPWebhookTransport.signature(of: message, timestamp: timestamp, secrets: secrets),
            ]
        }
        let tampered = Array(String(decoding: message.body, as: UTF8.self).replacingOccurrences(of: "\"user_42\"", with: "\"user_43\"").utf8)
        try #require(tampered != message.body)
        return [
            SignedCase(name: "genuine", secret: old, headers: headers(message.id, now, [old]), body: message.body, genuine: true),
            // During a rotation: signed with the new secret and the old; the receiver holds either.
            SignedCase(name: "rotation-old", secret: old, headers: headers(message.id, now, [new, old]), body: message.body, genuine: true),
            SignedCase(name: "rotation-new", secret: new, headers: headers(message.id, now, [new, old]), body: message.body, genuine: true),
            SignedCase(name: "tampered-body", secret: old, headers: headers(message.id, now, [old]), body: tampered, genuine: false),
            SignedCase(name: "wrong-secret", secret: stranger, headers: headers(message.id, now, [old]), body: message.body, genuine: false),
            SignedCase(
                name: "other-id", secret: old,
                headers: headers(message.id, now, [old]).merging(["webhook-id": "msg_99_mem_0000000000000"]) { $1 }, body: message.body, genuine: false
            ),
            SignedCase(name: "stale", secret: old, headers: headers(message.id, stale, [old]), body: message.body, genuine: false),
        ]
    }

    // MARK: - Running the snippets

    /// Appended to the Node snippet: runs it on each case of the file named first, one line each.
    static let nodeHarness = """
        const cases = JSON.parse(require("node:fs").readFileSync(process.argv[2], "utf8"));
        for (const c of cases) {
          console.log(`${c.name} ${verifyWebhook(c.secret, c.headers, Buffer.from(c.body, "base64")) ? "accepted" : "refused"}`);
        }
        """

    static let pythonHarness = """
        import json as _json, sys as _sys
        for _case in _json.load(open(_sys.argv[1])):
            try:
                verify_webhook(_case["secret"], _case["headers"], base64.b64decode(_case["body"]))
                print(_case["name"], "accepted")
            except ValueError:
                print(_case["name"], "refused")
        """

    static let goHarness = """
        package main

        import (
        \t"encoding/base64"
        \t"encoding/json"
        \t"fmt"
        \t"net/http"
        \t"os"
        )

        func main() {
        \tvar cases []struct {
        \t\tName, Secret, Body string
        \t\tHeaders           map[string]string
        \t}
        \tdata, err := os.ReadFile(os.Args[1])
        \tif err == nil {
        \t\terr = json.Unmarshal(data, &cases)
        \t}
        \tif err != nil {
        \t\tfmt.Println(err)
        \t\tos.Exit(2)
        \t}
        \tfor _, c := range cases {
        \t\theader := http.Header{}
        \t\tfor name, value := range c.Headers {
        \t\t\theader.Set(name, value)
        \t\t}
        \t\tbody, _ := base64.StdEncoding.DecodeString(c.Body)
        \t\tresult := "accepted"
        \t\tif VerifyWebhook(c.Secret, header, body) != nil {
        \t\t\tresult = "refused"
        \t\t}
        \t\tfmt.Println(c.Name, result)
        \t}
        }

        """

    /// Validates each case's payload against webhook.schema.json, whose `data` refers to response.schema.json
    /// (registered under its `$id`: with `referencing` in jsonschema 4.18 and later, a `RefResolver` before,
    /// as Debian's python3-jsonschema has). One JSON line per case.
    static let schemaValidator = """
        import json, sys
        from pathlib import Path
        from jsonschema import Draft202012Validator
        directory = Path(sys.argv[1])
        webhook = json.loads((directory / "webhook.schema.json").read_text())
        response = json.loads((directory / "response.schema.json").read_text())
        Draft202012Validator.check_schema(webhook)
        try:
            from referencing import Registry, Resource
            registry = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in (webhook, response)])
            validator = Draft202012Validator(webhook, registry=registry)
        except ImportError:
            from jsonschema import RefResolver
            resolver = RefResolver.from_schema(webhook, store={s["$id"]: s for s in (webhook, response)})
            validator = Draft202012Validator(webhook, resolver=resolver)
        for case in json.load(open(sys.argv[2])):
            errors = list(validator.iter_errors(case["payload"]))
            print(json.dumps({"name": case["name"], "valid": not errors, "error": errors[0].message[:300] if errors else None}))
        """

    static func isInstalled(_ tool: String) async throws -> Bool {
        let probe = try await ImportHarness.onThread { try ToolRun([tool, tool == "go" ? "version" : "--version"], in: NSTemporaryDirectory()) }
        return probe.status == 0
    }

    /// The first Python that can import `jsonschema`: the one on PATH, else the system's (Debian's
    /// python3-jsonschema), as the conformance tests look for it.
    static func pythonWithJSONSchema() async throws -> String {
        for candidate in ["python3", "/usr/bin/python3"] {
            let probe = try await ImportHarness.onThread { try ToolRun([candidate, "-c", "import jsonschema"], in: NSTemporaryDirectory()) }
            if probe.status == 0 { return candidate }
        }
        Issue.record("no python3 can import jsonschema: install Debian's python3-jsonschema (apt-get install -y python3-jsonschema)")
        return "python3"
    }
}

/// A program run to its end in `directory`, killed after `timeout` seconds: its exit status, and its standard
/// output and error together.
private struct ToolRun {
    let status: Int32
    let output: String

    init(_ arguments: [String], in directory: String, timeout: Double = 180) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        // `go run` needs a build cache; without a home it has none unless told.
        if environment["HOME"] == nil, environment["GOCACHE"] == nil { environment["GOCACHE"] = directory + "/.gocache" }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        // Read before waiting, so that a full pipe cannot block the program.
        output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        status = process.terminationStatus
    }
}

// MARK: - The Swift snippet of WEBHOOKS.md, compiled

// BEGIN the Swift snippet of WEBHOOKS.md (the lines of its VerifyWebhook.swift block after the imports; the test compares them)
/// Whether a request is a genuine message of entitled-stores. `secret` is the endpoint's "whsec_...",
/// `body` the raw body: verify the bytes received, before any JSON decoding.
func verifyWebhook(secret: String, id: String, timestamp: String, signatures: String, body: Data, now: Date = Date()) -> Bool {
    // Five minutes either way: an old message replayed is refused.
    guard !id.isEmpty, let seconds = UInt64(timestamp), abs(now.timeIntervalSince1970 - Double(seconds)) <= 300,
        let key = Data(base64Encoded: String(secret.dropFirst(secret.hasPrefix("whsec_") ? 6 : 0)))
    else { return false }
    let expected = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).".utf8) + body, using: SymmetricKey(data: key))
    // One "v1,<base64>" per secret the sender holds, separated by spaces: any one may match.
    return signatures.split(separator: " ").contains { entry in
        guard entry.hasPrefix("v1,"), let given = Data(base64Encoded: String(entry.dropFirst(3))) else { return false }
        return expected == given  // swift-crypto compares a MAC in constant time
    }
}
// END the Swift snippet of WEBHOOKS.md
