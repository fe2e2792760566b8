import EntitledClient
import Testing

@testable import EntitledConsole

/// `webhooks`: its words, its completion, how its answers are drawn, and what the session does with the
/// admin routes' answers and failures (through a `WebhookAdministration` of canned answers).
@Suite struct WebhooksCommandTests {
    static let crm =
        #"{"name":"crm","url":"https://crm.example.com/in","cursor":118,"newest":120,"lag":2,"queued":2,"inFlight":1,"delivered":117,"failed":2,"retried":31,"givenUp":[{"id":"msg_a","type":"membership.updated","sequence":57,"attempts":14,"lastResult":"HTTP 500","firstTriedAt":"2026-11-20T07:00:00.000Z","gaveUpAt":"2026-11-21T07:00:01.000Z"}]}"#
    static let billing =
        #"{"name":"billing","url":"http://10.0.0.5/hooks","cursor":90,"newest":120,"lag":30,"queued":0,"inFlight":0,"delivered":89,"failed":1,"retried":0,"setAside":{"reason":"HTTP 410 Gone","since":"2026-11-21T08:00:00.000Z"},"givenUp":[]}"#
    static let list = #"{"endpoints":["# + crm + "," + billing + "]}"
    /// 2026-11-22T08:00:00Z: a day after billing was set aside.
    static let now: Int64 = 1_795_334_400_000

    // MARK: parsing

    @Test(arguments: [
        ("webhooks", WebhookCommand.list), ("WEBHOOKS crm", .show(endpoint: "crm")), ("webhooks resume crm", .resume(endpoint: "crm")),
        ("webhooks Resume crm", .resume(endpoint: "crm")), ("webhooks redeliver crm msg_a", .redeliver(endpoint: "crm", message: "msg_a")),
    ])
    func theWordsSayWhichRouteToAsk(line: String, command: WebhookCommand) throws {
        #expect(try CommandParser.parse(line: line) == .webhooks(command))
    }

    @Test func missingAndExtraWordsAreRefusedWithTheUsage() {
        #expect(usageError("webhooks resume")?.message == "resume needs the endpoint's NAME, such as webhooks resume crm\nusage: webhooks [NAME] | resume NAME | redeliver NAME ID")
        #expect(usageError("webhooks redeliver crm")?.message.hasPrefix("redeliver needs the endpoint's NAME and the message's ID") == true)
        #expect(usageError("webhooks crm billing")?.message.hasPrefix("unexpected 'billing'; webhooks takes a NAME, resume NAME or redeliver NAME ID") == true)
        #expect(usageError("webhooks resume crm now")?.message.hasPrefix("unexpected 'now'") == true)
        #expect(usageError("webhooks limit=3")?.message == #"webhooks does not use "limit="; it takes no options"#)
    }

    @Test func resumeAndRedeliverAreNotAskedFirst() throws {
        #expect(try spec("webhooks").needsConfirmation == false)
    }

    // MARK: completion

    @Test func completionOffersTheActionsThenTheEndpointsThenTheirGivenUpMessages() throws {
        var knowledge = SessionKnowledge()
        knowledge.learn(webhookEndpoints: try WebhookEndpoint.list(from: JSONValue(parsing: Self.list)) ?? [])
        func complete(_ line: String) -> [String] { Completer.candidates(forLine: line, knowledge: knowledge).candidates }
        #expect(complete("web") == ["webhooks"])
        #expect(complete("webhooks ") == ["billing", "crm", "redeliver", "resume"])
        #expect(complete("webhooks res") == ["resume"])
        #expect(complete("webhooks resume ") == ["billing", "crm"])
        #expect(complete("webhooks redeliver crm ") == ["msg_a"])
        #expect(complete("webhooks redeliver billing ") == [])
        #expect(complete("webhooks crm ") == [])
    }

    // MARK: rendering

    @Test func theListHasARowAnEndpointWithItsLagAndState() throws {
        let endpoints = try #require(WebhookEndpoint.list(from: JSONValue(parsing: Self.list)))
        #expect(
            ResponseRenderer(style: .plain, now: Self.now).webhookEndpoints(endpoints) == """
                NAME     URL                         LAG  QUEUED  DELIVERED  FAILED  RETRIED  STATE
                crm      https://crm.example.com/in  2    2       117        2       31       delivering, given up 1
                billing  http://10.0.0.5/hooks       30   0       89         1       0        set aside since 2026-11-21T08:00:00.000Z (1 day ago): HTTP 410 Gone
                """
        )
        #expect(ResponseRenderer(style: .plain, now: Self.now).webhookEndpoints([]) == "(no webhook endpoints)")
    }

    @Test func anEndpointInDetailListsItsGivenUpMessagesAndHowToSendOneAgain() throws {
        let endpoint = try #require(WebhookEndpoint(json: JSONValue(parsing: Self.crm)))
        #expect(
            ResponseRenderer(style: .plain, now: Self.now).webhookEndpoint(endpoint) == """
                name:       crm
                url:        https://crm.example.com/in
                state:      delivering, given up 1
                lag:        2 (delivered up to change 118 of 120)
                queued:     2 (1 in flight)
                delivered:  117
                failed:     2
                retried:    31
                given up:
                ID     TYPE                SEQ  ATTEMPTS  LAST RESULT  FIRST TRIED                            GAVE UP
                msg_a  membership.updated  57   14        HTTP 500     2026-11-20T07:00:00.000Z (2 days ago)  2026-11-21T07:00:01.000Z (1 day ago)
                send one again with: webhooks redeliver crm msg_a
                """
        )
    }

    @Test func anEndpointMissingAFieldIsNotRead() throws {
        #expect(WebhookEndpoint(json: try JSONValue(parsing: #"{"name":"crm","url":"x"}"#)) == nil)
        #expect(WebhookEndpoint.list(from: try JSONValue(parsing: #"{"endpoints":[{"name":"crm"}]}"#)) == nil)
    }

    // MARK: the session

    @Test func theSessionShowsTheListOrTheJSONAsReceived() throws {
        let run = SessionRun(answers: [.endpoints: .success(Self.list)])
        #expect(run.session.run(line: "webhooks") == .succeeded)
        #expect(run.output.first?.hasPrefix("NAME     URL") == true)
        #expect(run.session.knowledge.webhookEndpoints["crm"] == ["msg_a"])
        let json = SessionRun(answers: [.endpoints: .success(Self.list)], printsJSON: true)
        #expect(json.session.run(line: "webhooks") == .succeeded)
        #expect(json.output == [Self.list])
        #expect(json.session.run(line: "webhooks billing") == .succeeded)
        #expect(json.output.last == (try JSONValue(parsing: Self.billing)).jsonText)
    }

    @Test func anUnknownEndpointIsNamedWithTheOnesThereAreAndStatus1() {
        let run = SessionRun(answers: [.endpoints: .success(Self.list)])
        #expect(run.session.run(line: "webhooks crn") == .failedOnServer)
        #expect(run.errors == ["error: http://stores.test: no webhook endpoint crn; its endpoints are crm, billing"])
    }

    @Test func aRedeliveryTheEndpointRefusedIsStatus1AndSaysItStaysGivenUp() {
        let run = SessionRun(answers: [.redeliver: .success(#"{"delivered":false,"result":"HTTP 500"}"#)])
        #expect(run.session.run(line: "webhooks redeliver crm msg_a") == .failedOnServer)
        #expect(run.errors == ["not delivered: crm did not take msg_a: HTTP 500; it stays given up"])
        let taken = SessionRun(answers: [.redeliver: .success(#"{"delivered":true,"result":"delivered (HTTP 204)"}"#)])
        #expect(taken.session.run(line: "webhooks redeliver crm msg_a") == .succeeded)
        #expect(taken.output == ["redelivered: crm took msg_a: delivered (HTTP 204)"])
    }

    @Test func resumeShowsTheEndpointAsItNowIs() {
        let run = SessionRun(answers: [.resume: .success(Self.crm)])
        #expect(run.session.run(line: "webhooks resume crm") == .succeeded)
        #expect(run.output.first?.hasPrefix("resumed crm\nname:       crm\n") == true)
    }

    @Test(arguments: [
        (WebhookAdminError.missingToken(address: "http://stores.test"), CommandOutcome.usageError),
        (.refusedToken(address: "http://stores.test", origin: "ENTITLECTL_STORES_TOKEN"), .connectionError),
        (.unreachable(address: "http://stores.test", reason: "connection refused"), .connectionError),
        (.notFound(address: "http://stores.test", reason: "the webhook admin routes are not served: the webhooks file has no admin-token-file"), .failedOnServer),
    ])
    func eachFailureIsShownWithItsStatus(failure: WebhookAdminError, outcome: CommandOutcome) {
        let run = SessionRun(answers: [.endpoints: .failure(failure)])
        #expect(run.session.run(line: "webhooks") == outcome)
        #expect(run.errors == ["error: " + failure.message])
    }

    @Test func theMessagesNameTheAddressAndTheFix() {
        #expect(
            WebhookAdminError.refusedToken(address: "http://127.0.0.1:7118", origin: "the token file /etc/t").message
                == "http://127.0.0.1:7118 refused the admin token from the token file /etc/t (401): it must be the token of the webhooks file's admin-token-file"
        )
        #expect(
            WebhookAdminError.unreachable(address: "http://127.0.0.1:7118", reason: "connection refused").message
                == "cannot reach entitled-stores at http://127.0.0.1:7118 (connection refused): is entitled-stores serve --webhooks running there? Name its address with --stores URL"
        )
        #expect(WebhookAdminError.missingToken(address: "http://127.0.0.1:7118").message.contains("--stores-token-file PATH"))
    }

    @Test func aSessionWithoutAdministrationSaysSo() {
        let run = SessionRun(answers: [:])
        run.session.webhookAdministration = nil
        #expect(run.session.run(line: "webhooks") == .usageError)
    }
}

/// A session whose `webhooks` go to canned answers, with what it printed.
private final class SessionRun {
    enum Route: Hashable { case endpoints, resume, redeliver }

    struct Canned: WebhookAdministration {
        let answers: [Route: Result<String, WebhookAdminError>]
        var address: String { "http://stores.test" }

        func answer(_ route: Route) throws(WebhookAdminError) -> WebhookAnswer {
            switch answers[route] ?? .failure(.notFound(address: address, reason: "not canned")) {
            case .success(let text): return try WebhookAnswer(text: text, from: address)
            case .failure(let error): throw error
            }
        }
        func endpoints() throws(WebhookAdminError) -> WebhookAnswer { try answer(.endpoints) }
        func resume(endpoint: String) throws(WebhookAdminError) -> WebhookAnswer { try answer(.resume) }
        func redeliver(endpoint: String, message: String) throws(WebhookAdminError) -> WebhookAnswer { try answer(.redeliver) }
    }

    var output: [String] = []
    var errors: [String] = []
    var session: ConsoleSession!

    init(answers: [Route: Result<String, WebhookAdminError>], printsJSON: Bool = false) {
        // Never connected: webhooks does not use the server.
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: 1), timeout: 1)
        session = ConsoleSession(
            connection: connection, printsJSON: printsJSON, style: .plain,
            standardOutput: { [unowned self] in output.append($0) }, standardError: { [unowned self] in errors.append($0) }
        )
        session.webhookAdministration = Canned(answers: answers)
    }
}
