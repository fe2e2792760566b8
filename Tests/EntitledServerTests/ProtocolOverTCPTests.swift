import EntitledCore
import Foundation
import Testing

@Suite("The line protocol over a real TCP connection")
struct ProtocolOverTCPTests {
    @Test func pipelinedRequestsAreAnsweredInRequestOrder() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let grant = try connection.request(#"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d"}"#)
            #expect(grant.ok == true)

            // 200 requests of mixed operations in one write: the server reads them in one or a few reads.
            var batch = ""
            for index in 0..<200 {
                switch index % 4 {
                case 0: batch += #"{"op":"check","user":"u1","product":"prod_pro","id":\#(index)}"# + "\n"
                case 1: batch += #"{"op":"ping","id":\#(index)}"# + "\n"
                case 2: batch += #"{"op":"nope","id":\#(index)}"# + "\n"
                default: batch += #"{"op":"check","user":"nobody","id":\#(index)}"# + "\n"
                }
            }
            try connection.send(batch)
            for index in 0..<200 {
                let line = try #require(try connection.readLine())
                let response = try JSONObject(line: line)
                #expect(response["id"] as? Int == index, "response \(index) out of order: \(line)")
                switch index % 4 {
                case 0: #expect(response.active == true)
                case 1: #expect(response.ok == true)
                case 2: #expect(response.errorCode == "unknown_op")
                default: #expect(response.active == false)
                }
            }
        }
    }

    @Test func aRequestSplitAcrossManyTCPReadsIsAnsweredOnce() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let line = Array(#"{"op":"grant","device":"d1","product":"prod_pro","id":"split"}"#.utf8) + [10]
            for byte in line {
                try connection.send(bytes: [byte])
                try await Task.sleep(for: .milliseconds(2))  // TCP_NODELAY: each byte is its own segment
            }
            let response = try JSONObject(line: try #require(try connection.readLine()))
            #expect(response.ok == true)
            #expect(response["id"] as? String == "split")
            #expect(server.store.membershipCount == 1)

            // A line split in the middle of a multi-byte UTF-8 character is reassembled before decoding.
            let unicode = Array(#"{"op":"check","user":"usér","id":2}"#.utf8) + [10]
            let cut = unicode.firstIndex(of: 0xC3)! + 1
            try connection.send(bytes: Array(unicode[..<cut]))
            try await Task.sleep(for: .milliseconds(20))
            try connection.send(bytes: Array(unicode[cut...]))
            let checked = try JSONObject(line: try #require(try connection.readLine()))
            #expect(checked.ok == true)
            #expect(checked.active == false)
        }
    }

    @Test func badLinesGetErrorsAndTheConnectionStaysUsable() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let cases: [(line: String, code: String)] = [
                ("not json", "bad_json"),
                ("{\"op\":\"check\"", "bad_json"),
                ("", "bad_json"),
                ("[1,2,3]", "bad_request"),
                (#"{"op":"grant","device":"d1"}"#, "bad_request"),
                (#"{"op":"check","user":5}"#, "bad_request"),
                (#"{"op":"launch"}"#, "unknown_op"),
                (#"{"op":"revoke","membership":"mem_doesnotexist"}"#, "not_found"),
                (#"{"op":"check","user":"u1","entitlement":"undefined"}"#, "not_found"),
            ]
            for (line, code) in cases {
                let response = try connection.request(line)
                #expect(response.ok == false, "\(line)")
                #expect(response.errorCode == code, "\(line) -> \(response)")
                #expect((response.errorMessage ?? "").count > 10, "a message a person can act on: \(response)")
            }
            let ping = try connection.request(#"{"op":"ping"}"#)
            #expect(ping.ok == true)
        }
    }

    @Test func invalidUTF8IsRefusedAsBadJSONWithoutClosingTheConnection() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            try connection.send(bytes: Array(#"{"op":"check","user":""#.utf8) + [0xFF, 0xFE] + Array("\"}\n".utf8))
            let response = try JSONObject(line: try #require(try connection.readLine()))
            #expect(response.errorCode == "bad_json")
            #expect(try connection.request(#"{"op":"ping"}"#).ok == true)
        }
    }

    @Test func aCarriageReturnBeforeTheNewlineIsTolerated() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            try connection.send("{\"op\":\"ping\",\"id\":\"crlf\"}\r\n")
            let response = try JSONObject(line: try #require(try connection.readLine()))
            #expect(response.ok == true)
            #expect(response["id"] as? String == "crlf")
        }
    }

    @Test func aLineOverTheLimitIsAnsweredTooLargeAndTheConnectionIsClosed() async throws {
        try await withTestServer { server in
            // The default limit is 64 KiB: send a 70 KB line.
            let connection = try server.connect()
            #expect(try connection.request(#"{"op":"ping","id":1}"#).ok == true)
            let padding = String(repeating: "x", count: 70_000)
            try connection.send(#"{"op":"ping","padding":"\#(padding)"}"# + "\n")
            let response = try JSONObject(line: try #require(try connection.readLine()))
            #expect(response.errorCode == "too_large")
            #expect(try connection.isClosedByServer())

            // Other connections are unaffected.
            #expect(try server.connect().request(#"{"op":"ping"}"#).ok == true)
        }
    }

    @Test func aLineAtExactlyTheLimitIsAcceptedAndOneByteMoreIsNot() async throws {
        try await withTestServer(maximumLineLength: 100) { server in
            func line(ofLength length: Int) -> String {
                let prefix = #"{"op":"ping","padding":""#
                let suffix = #""}"#
                return prefix + String(repeating: "p", count: length - prefix.count - suffix.count) + suffix
            }
            let connection = try server.connect()
            #expect(try connection.request(line(ofLength: 100)).ok == true)
            // The "\r" of a "\r\n" ending does not count against the limit.
            try connection.send(line(ofLength: 100) + "\r\n")
            #expect(try JSONObject(line: try #require(try connection.readLine())).ok == true)

            let refused = try server.connect()
            #expect(try refused.request(line(ofLength: 101)).errorCode == "too_large")
            #expect(try refused.isClosedByServer())
        }
    }

    @Test func aLongLineWithoutANewlineIsRefusedBeforeItEnds() async throws {
        try await withTestServer(maximumLineLength: 1024) { server in
            let connection = try server.connect()
            // No newline at all: the server must not buffer without bound waiting for one.
            try connection.send(String(repeating: "a", count: 4096))
            let response = try JSONObject(line: try #require(try connection.readLine()))
            #expect(response.errorCode == "too_large")
            #expect(try connection.isClosedByServer())
        }
    }

    @Test func theLastLineIsAnsweredWhenTheClientClosesItsSideWithoutANewline() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            try connection.send(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"#)
            connection.closeSending()
            let first = try JSONObject(line: try #require(try connection.readLine()))
            let second = try JSONObject(line: try #require(try connection.readLine()))
            #expect(first["id"] as? Int == 1)
            #expect(second["id"] as? Int == 2)
            #expect(try connection.isClosedByServer())
        }
    }

    @Test func aLastLineWithoutANewlineIsHeldToTheSameLimit() async throws {
        try await withTestServer(maximumLineLength: 20) { server in
            let atLimit = try server.connect()
            try atLimit.send(#"{"op":"ping","x":12}"#)  // 20 bytes
            atLimit.closeSending()
            #expect(try JSONObject(line: try #require(try atLimit.readLine())).ok == true)

            let overLimit = try server.connect()
            try overLimit.send(#"{"op":"ping","x":123}"#)  // 21 bytes
            overLimit.closeSending()
            #expect(try JSONObject(line: try #require(try overLimit.readLine())).errorCode == "too_large")
            #expect(try overLimit.isClosedByServer())
        }
    }

    @Test func aWriteOnOneConnectionIsVisibleToAReadOnAnotherRightAfterItsResponse() async throws {
        try await withTestServer { server in
            let writer = try server.connect()
            let reader = try server.connect()
            for index in 0..<50 {
                let user = "reader-\(index)"
                #expect(try reader.request(#"{"op":"check","user":"\#(user)"}"#).active == false)
                #expect(try writer.request(#"{"op":"grant","user":"\#(user)","product":"p"}"#).ok == true)
                #expect(try reader.request(#"{"op":"check","user":"\#(user)"}"#).active == true)
            }
        }
    }

    @Test func concurrentClientsGetTheirOwnAnswers() async throws {
        try await withTestServer { server in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        let connection = try server.connect()
                        for round in 0..<25 {
                            let user = "c\(client)-u\(round)"
                            let grant = try connection.request(
                                #"{"op":"grant","user":"\#(user)","product":"prod_\#(client)","id":"\#(user)"}"#
                            )
                            guard grant["id"] as? String == user, grant.ok == true else {
                                throw LineConnection.Failure(description: "unexpected \(grant)")
                            }
                            let check = try connection.request(#"{"op":"check","user":"\#(user)","product":"prod_\#(client)"}"#)
                            guard check.active == true else { throw LineConnection.Failure(description: "unexpected \(check)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.store.membershipCount == 200)
        }
    }

    @Test func theGuestPurchaseLifecycleWorksEndToEnd() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            #expect(try connection.request(#"{"op":"define","entitlement":"pro","products":["prod_pro_m","prod_pro_y"]}"#).ok == true)
            let grant = try connection.request(#"{"op":"grant","device":"d1","product":"prod_pro_m","duration":"30d"}"#)
            let membershipID = try #require(grant.membershipID)
            #expect(try connection.request(#"{"op":"check","device":"d1","entitlement":"pro"}"#).active == true)
            #expect(try connection.request(#"{"op":"claim","device":"d1","user":"u1"}"#)["claimed"] as? Int == 1)
            #expect(try connection.request(#"{"op":"claim","device":"d1","user":"u1"}"#)["claimed"] as? Int == 0)
            #expect(try connection.request(#"{"op":"check","device":"d1","entitlement":"pro"}"#).active == false)
            #expect(try connection.request(#"{"op":"check","user":"u1","device":"d2","entitlement":"pro"}"#).active == true)

            let revoke = try connection.request(#"{"op":"revoke","membership":"\#(membershipID)","reason":"refund"}"#)
            #expect(revoke.membership?["status"] as? String == "revoked")
            #expect(revoke.membership?["isActive"] as? Bool == false)
            #expect(revoke.membership?["reason"] as? String == "refund")
            #expect(revoke.membership?["revokedAt"] is String)
            let again = try connection.request(#"{"op":"revoke","membership":"\#(membershipID)","reason":"chargeback"}"#)
            #expect(again.membership?["reason"] as? String == "refund")
            #expect(again.membership?["revokedAt"] as? String == revoke.membership?["revokedAt"] as? String)
            #expect(try connection.request(#"{"op":"check","user":"u1","entitlement":"pro"}"#).active == false)

            let listed = try connection.request(#"{"op":"memberships","user":"u1"}"#)
            let memberships = try #require(listed["memberships"] as? [[String: Any]])
            #expect(memberships.count == 1)
            #expect(memberships.first?["status"] as? String == "revoked")
        }
    }

    @Test func checkAtAPointInTimeUsesTheGivenMoment() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            _ = try connection.request(#"{"op":"grant","user":"u1","product":"p","expiresAt":"2030-01-01T00:00:00Z"}"#)
            let before = try connection.request(#"{"op":"check","user":"u1","product":"p","at":"2029-12-31T23:59:59.999Z"}"#)
            #expect(before.active == true)
            #expect(before["expiresAt"] as? String == "2030-01-01T00:00:00Z")
            #expect(try connection.request(#"{"op":"check","user":"u1","product":"p","at":"2030-01-01T00:00:00Z"}"#).active == false)
            #expect(try connection.request(#"{"op":"check","user":"u1","product":"p","at":"2030-01-01T01:00:00+01:00"}"#).active == false)
            #expect(try connection.request(#"{"op":"check","user":"u1","product":"p","at":"2030-01-01T00:59:59+01:00"}"#).active == true)
        }
    }
}
