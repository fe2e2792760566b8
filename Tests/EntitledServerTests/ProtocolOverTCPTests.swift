import EntitledClient
import EntitledCore
import Testing

@Suite("The line protocol over a real TCP connection")
struct ProtocolOverTCPTests {
    @Test func pipelinedRequestsAreAnsweredInRequestOrder() async throws {
        try await withTestServer { server in
            // Raw: the point is 200 requests in one write, and reading their answers off the wire in order.
            let connection = try server.rawSocket()
            try connection.send(#"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d"}"# + "\n")
            #expect(try connection.readResponse().isOK)

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
                let response = try connection.readResponse()
                #expect(response["id"]?.intValue == index, "response \(index) out of order: \(response.line)")
                switch index % 4 {
                case 0: #expect(response.active == true)
                case 1: #expect(response.isOK)
                case 2: #expect(response.errorCode == "unknown_op")
                default: #expect(response.active == false)
                }
            }
        }
    }

    /// A pipelined batch has its checks' users prefetched before it is answered
    /// (`ServedConnection.lookAheadAtPipelinedLines`): lines that only look like checks, a user without its
    /// closing quote, escapes and a partial last line must be answered exactly as when sent one by one.
    @Test func checksThatLookAlikeInOnePipelinedWriteAreAnsweredAsWhenSentOneByOne() async throws {
        try await withTestServer { server in
            let connection = try server.rawSocket()
            try connection.send(#"{"op":"grant","user":"u1","product":"prod_pro"}"# + "\n")
            #expect(try connection.readResponse().isOK)
            let lines = [
                #"{"op":"check","user":"u1","product":"prod_pro","id":1}"#,
                #"{"op":"check","user":"u1"#,  // no closing quote: bad JSON
                #"{"op":"check","user":""}"#,
                #"{"op":"check","user":"u\u0031","product":"prod_pro","id":4}"#,  // "u1", escaped
                #"{"op":"check","user":"u1","product":"prod_pro","bogus":1}"#,
                #"{"op":"check","user":"nobody","product":"prod_pro","id":6}"#,
                #"{"op":"check","user":"u1","product":"prod_pro","id":7}"#,
            ]
            var oneByOne: [String] = []
            for line in lines {
                try connection.send(line + "\n")
                oneByOne.append(try connection.readResponse().line)
            }
            try connection.send(lines.joined(separator: "\n") + "\n" + #"{"op":"check","user":"u1","product":"prod_pro","id":8"#)
            for (index, expected) in oneByOne.enumerated() {
                #expect(try connection.readResponse().line == expected, "line \(index + 1)")
            }
            try connection.send("}\n")  // the partial last line, completed
            let last = try connection.readResponse()
            #expect(last.active == true)
            #expect(last["id"]?.intValue == 8)
            #expect(oneByOne[0].contains(#""active":true"#) && oneByOne[3].contains(#""active":true"#))
            #expect(oneByOne[5].contains(#""active":false"#))
        }
    }

    @Test func aRequestSplitAcrossManyTCPReadsIsAnsweredOnce() async throws {
        try await withTestServer { server in
            let connection = try server.rawSocket()
            let line = Array(#"{"op":"grant","device":"d1","product":"prod_pro","id":"split"}"#.utf8) + [10]
            for byte in line {
                try connection.send(bytes: [byte])
                try await Task.sleep(for: .milliseconds(2))  // TCP_NODELAY: each byte is its own segment
            }
            let response = try connection.readResponse()
            #expect(response.isOK)
            #expect(response["id"]?.stringValue == "split")
            #expect(server.store.membershipCount == 1)

            // A line split in the middle of a multi-byte UTF-8 character is reassembled before decoding.
            let unicode = Array(#"{"op":"check","user":"usér","id":2}"#.utf8) + [10]
            let cut = unicode.firstIndex(of: 0xC3)! + 1
            try connection.send(bytes: Array(unicode[..<cut]))
            try await Task.sleep(for: .milliseconds(20))
            try connection.send(bytes: Array(unicode[cut...]))
            let checked = try connection.readResponse()
            #expect(checked.isOK)
            #expect(checked.active == false)
        }
    }

    @Test func badLinesGetErrorsAndTheConnectionStaysUsable() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
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
                let response = try await connection.send(line: line)
                #expect(!response.isOK, "\(line)")
                #expect(response.errorCode == code, "\(line) -> \(response.line)")
                let message = response["error"]?["message"]?.stringValue ?? ""
                #expect(message.count > 10, "a message a person can act on: \(response.line)")
            }
            let ping = try await connection.send(line: #"{"op":"ping"}"#)
            #expect(ping.isOK)
        }
    }

    @Test func invalidUTF8IsRefusedAsBadJSONWithoutClosingTheConnection() async throws {
        try await withTestServer { server in
            let connection = try server.rawSocket()
            try connection.send(bytes: Array(#"{"op":"check","user":""#.utf8) + [0xFF, 0xFE] + Array("\"}\n".utf8))
            #expect(try connection.readResponse().errorCode == "bad_json")
            try connection.send(#"{"op":"ping"}"# + "\n")
            #expect(try connection.readResponse().isOK)
        }
    }

    @Test func aCarriageReturnBeforeTheNewlineIsTolerated() async throws {
        try await withTestServer { server in
            let connection = try server.rawSocket()
            try connection.send("{\"op\":\"ping\",\"id\":\"crlf\"}\r\n")
            let response = try connection.readResponse()
            #expect(response.isOK)
            #expect(response["id"]?.stringValue == "crlf")
        }
    }

    @Test func aLineOverTheLimitIsAnsweredTooLargeAndTheConnectionIsClosed() async throws {
        try await withTestServer { server in
            // The default limit is 64 KiB: send a 70 KB line.
            let connection = try server.rawSocket()
            try connection.send(#"{"op":"ping","id":1}"# + "\n")
            #expect(try connection.readResponse().isOK)
            let padding = String(repeating: "x", count: 70_000)
            try connection.send(#"{"op":"ping","padding":"\#(padding)"}"# + "\n")
            #expect(try connection.readResponse().errorCode == "too_large")
            #expect(try connection.isClosedByServer())

            // Other connections are unaffected.
            #expect(try await server.connect().send(line: #"{"op":"ping"}"#).isOK)
        }
    }

    @Test func aLineAtExactlyTheLimitIsAcceptedAndOneByteMoreIsNot() async throws {
        try await withTestServer(maximumLineLength: 100) { server in
            func line(ofLength length: Int) -> String {
                let prefix = #"{"op":"ping","id":""#
                let suffix = #""}"#
                return prefix + String(repeating: "p", count: length - prefix.count - suffix.count) + suffix
            }
            let connection = try server.rawSocket()
            try connection.send(line(ofLength: 100) + "\n")
            #expect(try connection.readResponse().isOK)
            // The "\r" of a "\r\n" ending does not count against the limit.
            try connection.send(line(ofLength: 100) + "\r\n")
            #expect(try connection.readResponse().isOK)

            let refused = try server.rawSocket()
            try refused.send(line(ofLength: 101) + "\n")
            #expect(try refused.readResponse().errorCode == "too_large")
            #expect(try refused.isClosedByServer())
        }
    }

    @Test func aLongLineWithoutANewlineIsRefusedBeforeItEnds() async throws {
        try await withTestServer(maximumLineLength: 1024) { server in
            let connection = try server.rawSocket()
            // No newline at all: the server must not buffer without bound waiting for one.
            try connection.send(String(repeating: "a", count: 4096))
            #expect(try connection.readResponse().errorCode == "too_large")
            #expect(try connection.isClosedByServer())
        }
    }

    @Test func theLastLineIsAnsweredWhenTheClientClosesItsSideWithoutANewline() async throws {
        try await withTestServer { server in
            let connection = try server.rawSocket()
            try connection.send(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"#)
            connection.closeSending()
            #expect(try connection.readResponse()["id"]?.intValue == 1)
            #expect(try connection.readResponse()["id"]?.intValue == 2)
            #expect(try connection.isClosedByServer())
        }
    }

    @Test func aLastLineWithoutANewlineIsHeldToTheSameLimit() async throws {
        try await withTestServer(maximumLineLength: 20) { server in
            let atLimit = try server.rawSocket()
            try atLimit.send(#"{"op":"ping","id":1}"#)  // 20 bytes
            atLimit.closeSending()
            #expect(try atLimit.readResponse().isOK)

            let overLimit = try server.rawSocket()
            try overLimit.send(#"{"op":"ping","id":12}"#)  // 21 bytes
            overLimit.closeSending()
            #expect(try overLimit.readResponse().errorCode == "too_large")
            #expect(try overLimit.isClosedByServer())
        }
    }

    @Test func aWriteOnOneConnectionIsVisibleToAReadOnAnotherRightAfterItsResponse() async throws {
        try await withTestServer { server in
            let writer = try await server.connect()
            let reader = try await server.connect()
            for index in 0..<50 {
                let user = "reader-\(index)"
                #expect(try await reader.send(line: #"{"op":"check","user":"\#(user)"}"#).active == false)
                #expect(try await writer.send(line: #"{"op":"grant","user":"\#(user)","product":"p"}"#).isOK)
                #expect(try await reader.send(line: #"{"op":"check","user":"\#(user)"}"#).active == true)
            }
        }
    }

    @Test func concurrentClientsGetTheirOwnAnswers() async throws {
        try await withTestServer { server in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        let connection = try await server.connect()
                        for round in 0..<25 {
                            let user = "c\(client)-u\(round)"
                            let grant = try await connection.send(
                                line: #"{"op":"grant","user":"\#(user)","product":"prod_\#(client)","id":"\#(user)"}"#
                            )
                            try #require(grant["id"]?.stringValue == user && grant.isOK, "unexpected \(grant.line)")
                            let check = try await connection.send(
                                line: #"{"op":"check","user":"\#(user)","product":"prod_\#(client)"}"#
                            )
                            try #require(check.active == true, "unexpected \(check.line)")
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
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro_m","prod_pro_y"]}"#).isOK)
            let grant = try await connection.send(line: #"{"op":"grant","device":"d1","product":"prod_pro_m","duration":"30d"}"#)
            let membershipID = try #require(grant.membership?.id)
            #expect(try await connection.send(line: #"{"op":"check","device":"d1","entitlement":"pro"}"#).active == true)
            #expect(try await connection.send(line: #"{"op":"claim","device":"d1","user":"u1"}"#)["claimed"]?.intValue == 1)
            #expect(try await connection.send(line: #"{"op":"claim","device":"d1","user":"u1"}"#)["claimed"]?.intValue == 0)
            #expect(try await connection.send(line: #"{"op":"check","device":"d1","entitlement":"pro"}"#).active == false)
            #expect(try await connection.send(line: #"{"op":"check","user":"u1","device":"d2","entitlement":"pro"}"#).active == true)

            let revoke = try await connection.send(line: #"{"op":"revoke","membership":"\#(membershipID)","reason":"refund"}"#)
            #expect(revoke.membership?.status == "revoked")
            #expect(revoke.membership?.isActive == false)
            #expect(revoke.membership?.reason == "refund")
            #expect(revoke.membership?.revokedAt != nil)
            let again = try await connection.send(line: #"{"op":"revoke","membership":"\#(membershipID)","reason":"chargeback"}"#)
            #expect(again.membership?.reason == "refund")
            #expect(again.membership?.revokedAt == revoke.membership?.revokedAt)
            #expect(try await connection.send(line: #"{"op":"check","user":"u1","entitlement":"pro"}"#).active == false)

            let listed = try await connection.send(line: #"{"op":"memberships","user":"u1"}"#)
            let memberships = try #require(listed["memberships"]?.arrayValue)
            #expect(memberships.count == 1)
            #expect(memberships.first?["status"]?.stringValue == "revoked")
        }
    }

    @Test func checkAtAPointInTimeUsesTheGivenMoment() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            _ = try await connection.send(line: #"{"op":"grant","user":"u1","product":"p","expiresAt":"2030-01-01T00:00:00Z"}"#)
            let before = try await connection.send(line: #"{"op":"check","user":"u1","product":"p","at":"2029-12-31T23:59:59.999Z"}"#)
            #expect(before.active == true)
            #expect(before["expiresAt"]?.stringValue == "2030-01-01T00:00:00Z")
            #expect(try await connection.send(line: #"{"op":"check","user":"u1","product":"p","at":"2030-01-01T00:00:00Z"}"#).active == false)
            #expect(try await connection.send(line: #"{"op":"check","user":"u1","product":"p","at":"2030-01-01T01:00:00+01:00"}"#).active == false)
            #expect(try await connection.send(line: #"{"op":"check","user":"u1","product":"p","at":"2030-01-01T00:59:59+01:00"}"#).active == true)
        }
    }
}
