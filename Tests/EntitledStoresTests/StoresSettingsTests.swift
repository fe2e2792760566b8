import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The receiver's settings from a configuration file, its token for a server with authentication, and
/// what it refuses at start.
@Suite struct StoresSettingsTests {
    @Test func aConfigurationFileGivesTheSecretAndTheTokenOfAServerWithAuthentication() throws {
        let entitled = try RunningEntitled(tokens: [.admin])
        let files = try TemporaryDirectory()
        let tokenFile = files.path + "/stores.token"
        try (AuthFileEntry.admin.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let config = files.path + "/stores.json"
        try #"{"token-file": "\#(tokenFile)", "stripe-secret": ["whsec_old", "\#(StripeFixtures.secret)"], "stripe-user-key": "uid"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--config", config])
        let body = StripeFixtures.subscriptionEvent(
            "evt_cfg", type: "customer.subscription.created", created: StripeFixtures.now - 60, subscription: "sub_cfg",
            periodEnd: StripeFixtures.now + 86_400, user: nil
        )
        #expect(try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body)).body == "applied\n")
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port), token: AuthFileEntry.admin.token)
        #expect(try client.send(.memberships(originalTransactionId: "sub_cfg")).memberships?.first?.user == "cus_9")

        // Without the token the server refuses the receiver: 503, so Stripe delivers it again once fixed.
        let anonymous = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret])
        let other = StripeFixtures.subscriptionEvent("evt_anon", type: "customer.subscription.created", created: StripeFixtures.now - 60, subscription: "sub_anon", periodEnd: StripeFixtures.now + 86_400)
        let refused = try anonymous.post("/stripe", body: other, headers: StripeFixtures.signed(other))
        #expect(refused.status == 503)
        #expect(refused.body.contains("refused this receiver's token"))
    }

    @Test func anUnknownKeyOrHalfAStoresSettingsStopTheStart() throws {
        let files = try TemporaryDirectory()
        let config = files.path + "/stores.json"
        try #"{"stripe-secrets": "whsec_x"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        for arguments in [["--config", config], ["--apple-bundle-id", "com.example.app"], ["--google-package", "com.example.app"]] {
            let process = ServerProcess(arguments: ["--listen", "127.0.0.1:0"] + arguments, workingDirectory: files.path, executable: "entitled-stores")
            #expect(try process.runToExit() != 0, "\(arguments)")
            let errors = process.standardErrorText()
            #expect(errors.contains("stripe-secrets") || errors.contains("needs"), "\(errors)")
        }
    }
}
