import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Guessing tokens over fresh connections, against a real `entitled` with `--auth`: after 10 failures from
/// one address every `auth` from it is refused unread for the rest of the minute (the right token too),
/// the Unix socket is not affected, and the log holds one line for the burst, not one per guess.
@Suite struct AuthenticationThrottleTests {
    @Test func anAddressThatFailsTenTimesIsRefusedUnreadAndLoggedOnce() throws {
        let server = try RunningEntitled(unixSocket: true, tokens: [.admin])
        var failures = 0
        while failures < 10 {
            let connection = try RawSocket(port: server.port)
            for _ in 0..<3 where failures < 10 {
                try connection.send(#"{"op":"auth","token":"guess-\#(failures)-0123456789abcdef"}"# + "\n")
                let answer = try #require(try connection.readLine())
                #expect(answer.contains(#""code":"unauthorized""#), "\(answer)")
                failures += 1
            }
        }
        // The right token, from the same address, is refused without being looked at.
        let late = try RawSocket(port: server.port)
        try late.send(#"{"op":"auth","token":"\#(AuthFileEntry.admin.token)"}"# + "\n")
        let refused = try #require(try late.readLine())
        #expect(refused.contains("too many failed attempts from this address"), "\(refused)")
        #expect(try late.isClosedByServer())
        // The Unix socket's clients are not throttled.
        let local = EntitledConnection(address: .unixSocket(path: try #require(server.socketPath)), token: AuthFileEntry.admin.token)
        try local.connect()
        #expect(try local.send(line: #"{"op":"ping"}"#).isOK)
        local.close()

        let log = server.stopAndReadLog()
        let lines = log.split(separator: "\n").filter { $0.contains("authentication failed") }
        #expect(lines.count == 1, "\(lines.count) log lines for 10 failures in a burst")
    }
}
