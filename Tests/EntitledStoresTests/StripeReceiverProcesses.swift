import EntitledClient
import EntitledTestSupport
import Testing

/// A real `entitled`, an `entitled-stores` taking Stripe's events for it, and a client of `entitled`: what
/// the Stripe lifecycle and refund suites deliver their events to.
struct StripeReceiverProcesses {
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection

    init() throws {
        entitled = try RunningEntitled()
        stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret])
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    /// Delivers `body`, signed as Stripe signs it; the answer's body, which must come with a 200.
    func deliver(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let reply = try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body))
        #expect(reply.status == 200, "\(reply.body)", sourceLocation: sourceLocation)
        return reply.body
    }
}
