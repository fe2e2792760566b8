import EntitledClient
import EntitledCore
import EntitledTestSupport
import Foundation
import Testing

/// Requests whose cost grows with a subject's size, against a real `entitled`: they are bounded (paged,
/// or refused past `Limits.maximumMembershipsPerSubjectRead`), and a client pipelining them cannot hold
/// its loop while another client waits.
@Suite struct CostlyRequestsTests {
    /// Gives `user` `count` memberships, pipelined in batches (their log syncs are grouped).
    private static func grant(_ count: Int, to user: String, port: Int) throws {
        let socket = try RawSocket(port: port, timeoutSeconds: 60)
        var remaining = count
        while remaining > 0 {
            let batch = min(remaining, 1000)
            let line = #"{"op":"grant","user":"\#(user)","product":"prod","duration":"30d"}"# + "\n"
            try socket.send(String(repeating: line, count: batch))
            for _ in 0..<batch { #expect(try socket.readResponse().isOK) }
            remaining -= batch
        }
    }

    @Test func aClientPipeliningCostlyRequestsLetsAnotherClientsPingThrough() throws {
        let server = try RunningEntitled()
        let limit = Limits.maximumMembershipsPerSubjectRead
        try Self.grant(limit, to: "whale", port: server.port)
        let other = try RawSocket(port: server.port)
        try other.send(#"{"op":"ping"}"# + "\n")
        #expect(try other.readResponse().isOK)

        // Each `customer` of the whale goes through all its memberships: milliseconds each.
        let costly = try RawSocket(port: server.port, timeoutSeconds: 120)
        let requests = 20
        try costly.send(String(repeating: #"{"op":"customer","user":"whale"}"# + "\n", count: requests))
        // Its first answer shows the server is at work on the batch; the ping goes in then.
        #expect(try costly.readResponse().isOK)
        try other.send(#"{"op":"ping"}"# + "\n")
        #expect(try other.readResponse().isOK)
        let answeredBeforePing = 1 + costly.readAvailableLines().count
        // Before time slices, the loop answered all 20 in one turn and the ping waited for every one.
        #expect(answeredBeforePing < requests, "the ping was answered only after \(answeredBeforePing) of the \(requests) costly requests")
        var rest = answeredBeforePing
        while rest < requests {
            #expect(try costly.readResponse().isOK)
            rest += 1
        }
    }

    @Test func aSubjectPastTheLimitIsRefusedOverLimitAndStillListedPageByPage() throws {
        let server = try RunningEntitled()
        let limit = Limits.maximumMembershipsPerSubjectRead
        try Self.grant(limit + 1, to: "whale", port: server.port)
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        try client.connect()
        let past = Timestamp(millisecondsSinceEpoch: Timestamp.now().millisecondsSinceEpoch - 60_000).rfc3339
        for line in [
            #"{"op":"customer","user":"whale"}"#, #"{"op":"history","user":"whale"}"#,
            #"{"op":"check","user":"whale","at":"\#(past)"}"#, #"{"op":"memberships","user":"whale","at":"\#(past)"}"#,
        ] {
            let answer = try client.send(line: line)
            #expect(answer.error?.code == .overLimit, "\(line): \(answer.line)")
            #expect(answer.error?.message.contains("user \"whale\" has \(limit + 1) memberships") == true, "\(answer.line)")
        }
        // Checking now and listing page by page go on; every membership is listed once.
        #expect(try client.send(line: #"{"op":"check","user":"whale"}"#).line.contains(#""active":true"#))
        var seen = Set<String>()
        var after: String?
        var pages = 0
        repeat {
            let cursor = after.map { #","after":"\#($0)""# } ?? ""
            let page = try client.send(line: #"{"op":"memberships","user":"whale","limit":1000\#(cursor)}"#)
            let memberships = try #require(page.body["memberships"]?.arrayValue)
            for membership in memberships { seen.insert(membership["id"]?.stringValue ?? "") }
            after = page.body["next"]?.stringValue
            pages += 1
        } while after != nil
        #expect(pages == 11)
        #expect(seen.count == limit + 1)
    }
}
