import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Logging
import Testing

/// The webhooks file is refused with a reason that names what is wrong, and one state directory serves one
/// deliverer.
@Suite struct WebhooksConfigurationTests {
    static let secret = WebhookDeliveryTests.secret

    /// Writes `json` to a file and reads it as a webhooks file.
    func read(_ json: String) throws -> Result<WebhooksConfiguration, WebhooksConfigurationError> {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/webhooks.json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        do throws(WebhooksConfigurationError) {
            return .success(try WebhooksConfiguration.read(path: path))
        } catch {
            return .failure(error)
        }
    }

    func refusal(_ json: String) throws -> String {
        guard case .failure(let error) = try read(json) else {
            Issue.record("accepted: \(json)")
            return ""
        }
        return error.message
    }

    @Test func aFileWithEveryKeyIsReadWithItsDefaults() throws {
        let configuration = try read(#"{"endpoints":[{"name":"crm","url":"https://crm.example.com/in","secrets":["\#(Self.secret)"],"actions":["grant","renewal","erase"]}]}"#).get()
        let endpoint = try #require(configuration.endpoints.first)
        #expect(endpoint.filter.actions == ["grant", "renewal", "erase"] && endpoint.concurrency == 16 && endpoint.timeout == .seconds(15))
        #expect(configuration.starts["crm"] == .newest && configuration.adminToken == nil)
    }

    @Test func aMisspeltActionKeyOrSecretIsRefusedByName() throws {
        let base = #""name":"crm","url":"https://crm.example.com/in","secrets":["\#(Self.secret)"]"#
        #expect(try refusal(#"{"endpoints":[{\#(base),"actions":["grant","revokee"]}]}"#).contains(#""revokee", which is no action"#))
        #expect(try refusal(#"{"endpoints":[{\#(base),"action":["grant"]}]}"#).contains(#"unknown key "action""#))
        #expect(try refusal(#"{"endpoints":[{\#(base)}],"tokenfile":"x"}"#).contains(#"unknown key "tokenfile""#))
        #expect(try refusal(#"{"endpoints":[{"name":"crm","url":"https://crm.example.com/in","secrets":["not-a-secret"]}]}"#).contains("whsec_"))
        #expect(try refusal(#"{"endpoints":[{\#(base)},{\#(base)}]}"#).contains(#"names endpoint "crm" twice"#))
        #expect(try refusal(#"{"endpoints":[{"name":"crm","url":"ftp://x","secrets":["\#(Self.secret)"]}]}"#).contains("url"))
        #expect(try refusal(#"{"endpoints":[]}"#).contains("at least one endpoint"))
        #expect(try refusal(#"{"endpoints":[{\#(base),"url":"https://other.example.com"}]}"#).contains(#"the key "url" twice"#))
    }

    @Test func aSecondDelivererOnTheSameStateDirectoryIsRefused() throws {
        let configuration = try read(#"{"endpoints":[{"name":"crm","url":"https://crm.example.com/in","secrets":["\#(Self.secret)"]}]}"#).get()
        let directory = try TemporaryDirectory()
        let logger = Logger(label: "test")
        do {
            let first = try WebhookDeliverer(configuration: configuration, entitled: .tcp(host: "127.0.0.1", port: 1), stateDirectory: directory.path, logger: logger)
            #expect(throws: WebhookStateError.self) {
                _ = try WebhookDeliverer(configuration: configuration, entitled: .tcp(host: "127.0.0.1", port: 1), stateDirectory: directory.path, logger: logger)
            }
            withExtendedLifetime(first) {}
        }
        // Released with the first: a new one may take the directory.
        _ = try WebhookDeliverer(configuration: configuration, entitled: .tcp(host: "127.0.0.1", port: 1), stateDirectory: directory.path, logger: logger)
    }
}
