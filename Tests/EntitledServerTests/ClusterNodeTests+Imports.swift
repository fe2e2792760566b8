import EntitledClient
import EntitledCore
import EntitledServer
import Foundation
import Testing

/// Imports and a source's listing on a node of a cluster: the node's own import goes through the replicated
/// log like any grant, another node's arrives as a replayed change, and a listing's `next` given by another
/// node (which numbers its slots otherwise) goes on after the last membership its page looked at.
extension ClusterNodeTests {
    @Test func aNodeImportsThroughTheLogListsASourceAndTakesAnotherNodesCursor() async throws {
        try await withClusterNode(commitDelay: .milliseconds(1)) { server, log in
            let connection = try await server.connect()
            let own = try await connection.send(
                .grant(user: "u0", product: "pro", source: "play_store", duration: "1mo", purchasedAt: "2024-03-01T10:00:00Z", renewsCount: 7)
            )
            #expect(own.membership?.createdAt == "2024-03-01T10:00:00Z", "\(own.line)")
            #expect(own.membership?.renewsCount == 7)
            #expect(own.membership?.status == "expired")

            // Another node imports three more, and gives a page of one with its own numbering.
            let elsewhere = Box<(ids: [String], next: String?)>(([], nil))
            try log.asAnotherNode { other in
                var ids: [String] = []
                for index in 1...3 {
                    var grant = Grant(subject: .user("u\(index)"), productId: "pro", source: .playStore, terms: PurchaseTerms(renewsCount: index))
                    grant.purchasedAt = Timestamp(millisecondsSinceEpoch: 1_709_287_200_000 + Int64(index) * 86_400_000)
                    ids.append(try other.grant(grant).value.id.rawValue)
                }
                elsewhere.value = (ids, try other.membershipsPage(ofSource: .playStore, limit: 2).next?.text)
            }
            let page = try await connection.send(.memberships(source: "play_store"))
            let listed = try #require(page.memberships, "\(page.line)")
            #expect(listed.map(\.id) == [try #require(own.membership?.id)] + elsewhere.value.ids)
            #expect(listed.map(\.renewsCount) == [7, 1, 2, 3])
            #expect(page.next == nil)

            // The other node's cursor stopped after its second membership (the node's own import and u1's).
            let cursor = try #require(elsewhere.value.next)
            let rest = try await connection.send(.memberships(source: "play_store", after: cursor))
            #expect(rest.memberships?.map(\.id) == Array(elsewhere.value.ids.dropFirst()), "\(rest.line)")
        }
    }
}
