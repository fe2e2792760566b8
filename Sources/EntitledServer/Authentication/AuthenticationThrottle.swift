import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Failed `auth` requests, counted per client address group across every connection and loop: a group that
/// fails `maximumFailures` times within `windowMilliseconds` is refused `auth` until the window ends, so
/// guessing tokens over fresh connections gains nothing. It also keeps the log readable: one line at the
/// first failure of an interval, then one line a interval with the count, instead of a line per guess (one
/// client made 17,686 a second).
///
/// An address group is an IPv4 address, or an IPv6 address's /64: one host is commonly given a whole /64,
/// so counting IPv6 addresses one by one would let one host fill the table.
///
/// Bounded: at most `maximumAddresses` groups are tracked. When the table is full (after dropping the
/// groups whose window ended), the failures of every group it cannot take are counted together, in one
/// shared window with the same limit: filling the table only makes the newcomers share a single allowance,
/// so guessing stays at the documented rate (issue #44: a full table used to let a fresh address guess
/// without limit).
final class AuthenticationThrottle: Sendable {
    static let maximumFailures = 10
    static let windowMilliseconds: UInt64 = 60_000
    static let maximumAddresses = 16_384
    /// How often a summary of failures is logged at most.
    static let logIntervalMilliseconds: UInt64 = 10_000

    private struct Window {
        var startedAt: UInt64
        var failures: Int

        func endsAt() -> UInt64 { startedAt + AuthenticationThrottle.windowMilliseconds }

        /// Milliseconds until the window lets its group try again, or `nil` when it does now.
        func refusal(at now: UInt64) -> UInt64? {
            guard failures >= AuthenticationThrottle.maximumFailures, endsAt() > now else { return nil }
            return endsAt() - now
        }
    }

    private struct State {
        var windows: [String: Window] = [:]
        /// The failures of the groups a full table could not take.
        var overflow: Window?
        var loggedAt: UInt64?
        var unloggedFailures = 0
        var unloggedAddresses: Set<String> = []
    }

    private let state = NIOLockedValueBox(State())

    /// Milliseconds until `address` may try again, or `nil` when it may now.
    func refusal(for address: String, now: UInt64) -> UInt64? {
        let group = Self.group(of: address)
        return state.withLockedValue { state in
            if let window = state.windows[group] { return window.refusal(at: now) }
            guard state.windows.count >= Self.maximumAddresses else { return nil }
            return state.overflow?.refusal(at: now)
        }
    }

    /// Counts a failure of `address`. Returns what to log now, if anything: the first failure of a log
    /// interval alone, or the failures since the last line (`count`, from `addresses` address groups).
    func recordFailure(of address: String, now: UInt64) -> (count: Int, addresses: Int)? {
        let group = Self.group(of: address)
        return state.withLockedValue { state in
            if var window = state.windows[group], now < window.endsAt() {
                window.failures += 1
                state.windows[group] = window
            } else {
                if state.windows.count >= Self.maximumAddresses, state.windows[group] == nil {
                    state.windows = state.windows.filter { now < $0.value.endsAt() }
                }
                if state.windows.count < Self.maximumAddresses || state.windows[group] != nil {
                    state.windows[group] = Window(startedAt: now, failures: 1)
                } else if var overflow = state.overflow, now < overflow.endsAt() {
                    overflow.failures += 1
                    state.overflow = overflow
                } else {
                    state.overflow = Window(startedAt: now, failures: 1)
                }
            }
            state.unloggedFailures += 1
            if state.unloggedAddresses.count < 1000 { state.unloggedAddresses.insert(group) }
            guard state.loggedAt.map({ now >= $0 + Self.logIntervalMilliseconds }) ?? true else { return nil }
            defer {
                state.loggedAt = now
                state.unloggedFailures = 0
                state.unloggedAddresses = []
            }
            return (state.unloggedFailures, state.unloggedAddresses.count)
        }
    }
}

extension AuthenticationThrottle {
    /// The group `address` (an IP address in text) is counted in: an IPv4 address itself (an IPv4-mapped
    /// IPv6 address as its IPv4 address), an IPv6 address's first 64 bits (`2001:db8:1:2::/64`).
    static func group(of address: String) -> String {
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let octets = withUnsafeBytes(of: bytes) { Array($0) }
        if octets[0..<10].allSatisfy({ $0 == 0 }), octets[10] == 0xff, octets[11] == 0xff {
            return octets[12...].map(String.init).joined(separator: ".")
        }
        let hextets = stride(from: 0, to: 8, by: 2).map { String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16) }
        return hextets.joined(separator: ":") + "::/64"
    }

    /// Whether `address` is a loopback address (127.0.0.0/8, `::1`, or 127.0.0.0/8 mapped into IPv6):
    /// a client on this machine.
    static func isLoopback(_ address: String) -> Bool {
        group(of: address).hasPrefix("127.") || isIPv6Loopback(address)
    }

    private static func isIPv6Loopback(_ address: String) -> Bool {
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return false }
        return withUnsafeBytes(of: bytes) { raw in raw.prefix(15).allSatisfy { $0 == 0 } && raw[15] == 1 }
    }
}
