import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

// The size of the throttle's table of addresses, which a test fills.
@testable import EntitledServer

#if canImport(Glibc)
import Glibc
#endif

/// Guessing tokens over fresh connections, against a real `entitled` with `--auth`: after 10 failures from
/// one address every unknown token from it is refused unread for the rest of the minute (from another
/// machine, the right token too); a full table of addresses still throttles newcomers; the Unix socket
/// and the right token from this machine are not locked out; the log holds one line for the burst.
@Suite struct AuthenticationThrottleTests {
    /// Fails `count` times from `source` (a local IPv4 address), three guesses a connection.
    private func fail(_ count: Int, on server: RunningEntitled, host: String = "127.0.0.1", from source: String? = nil) throws {
        var failures = 0
        while failures < count {
            let connection = try RawSocket(port: server.port, host: host, from: source)
            for _ in 0..<3 where failures < count {
                try connection.send(#"{"op":"auth","token":"guess-\#(failures)-0123456789abcdef"}"# + "\n")
                let answer = try #require(try connection.readLine())
                #expect(answer.contains(#""code":"unauthorized""#), "\(answer)")
                failures += 1
            }
        }
    }

    private func auth(_ token: String, on server: RunningEntitled, host: String = "127.0.0.1", from source: String? = nil) throws -> String {
        let connection = try RawSocket(port: server.port, host: host, from: source)
        try connection.send(#"{"op":"auth","token":"\#(token)"}"# + "\n")
        return try #require(try connection.readLine())
    }

    @Test func anAddressThatFailsTenTimesIsRefusedUnreadAndLoggedOnce() throws {
        let server = try RunningEntitled(unixSocket: true, tokens: [.admin])
        try fail(10, on: server)
        let late = try RawSocket(port: server.port)
        try late.send(#"{"op":"auth","token":"guess-late-0123456789abcdef"}"# + "\n")
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

    @Test func aStrangersFailuresFromThisMachineDoNotLockOutAClientWithTheRightToken() throws {
        // A receiver on the same machine reconnects its pooled connection from 127.0.0.1 while another
        // process there has failed ten times: its token is still accepted, and guesses are still refused.
        let server = try RunningEntitled(tokens: [.admin])
        try fail(10, on: server)
        let genuine = try auth(AuthFileEntry.admin.token, on: server)
        #expect(genuine.contains(#""ok":true"#), "\(genuine)")
        let guess = try auth("guess-after-0123456789abcdef", on: server)
        #expect(guess.contains("too many failed attempts from this address"), "\(guess)")
    }

    @Test(.enabled(if: Self.nonLoopbackAddress != nil, "needs an IPv4 address of this machine other than loopback"))
    func fromAnotherMachineEvenTheRightTokenIsRefusedUnreadUntilTheMinuteEnds() throws {
        let source = try #require(Self.nonLoopbackAddress)
        let server = try RunningEntitled(tokens: [.admin], arguments: ["--host", "0.0.0.0"])
        try fail(10, on: server, host: source, from: source)
        let refused = try auth(AuthFileEntry.admin.token, on: server, host: source, from: source)
        #expect(refused.contains("too many failed attempts from this address"), "\(refused)")
        // Loopback is another address: not refused.
        #expect(try auth(AuthFileEntry.admin.token, on: server).contains(#""ok":true"#))
    }

    @Test func aFullTableOfAddressesStillThrottlesANewcomer() throws {
        // 16,384 addresses fail once each (127.1.x.y), filling the table; a fresh address then shares one
        // allowance of ten failures a minute with every address the table cannot take.
        let server = try RunningEntitled(tokens: [.admin])
        for index in 0..<AuthenticationThrottle.maximumAddresses {
            let source = "127.1.\(index / 250).\(index % 250 + 1)"
            let answer = try auth("guess-\(index)-0123456789abcdef", on: server, from: source)
            #expect(answer.contains(#""code":"unauthorized""#), "\(answer)")
        }
        var refused = 0
        for guess in 0..<30 {
            let answer = try auth("guess-fresh-\(guess)-0123456789abcdef", on: server, from: "127.200.0.\(guess % 3 + 1)")
            if answer.contains("too many failed attempts") { refused += 1 }
        }
        #expect(refused == 20, "\(refused) of 30 guesses beyond a full table refused")
    }

    /// An IPv4 address of this machine other than loopback, if it has one.
    static let nonLoopbackAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &inet, &text, socklen_t(text.count)) != nil else { continue }
            let found = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !found.hasPrefix("127.") { return found }
        }
        return nil
    }()
}
