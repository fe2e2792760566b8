import NIOConcurrencyHelpers

/// Failed `auth` requests, counted per client address across every connection and loop: an address that
/// fails `maximumFailures` times within `windowMilliseconds` is refused every `auth` (its token not even
/// looked at) until the window ends, so guessing tokens over fresh connections gains nothing. It also
/// keeps the log readable: one line at the first failure of an interval, then one line a interval with
/// the count, instead of a line per guess (one client made 17,686 a second).
///
/// Bounded: at most `maximumAddresses` are tracked; past that, addresses whose window ended are dropped,
/// and a new address is not tracked until there is room (tokens of at least 16 bytes are not guessed by
/// count; the bound keeps a flood of addresses from growing the server).
final class AuthenticationThrottle: Sendable {
    static let maximumFailures = 10
    static let windowMilliseconds: UInt64 = 60_000
    static let maximumAddresses = 16_384
    /// How often a summary of failures is logged at most.
    static let logIntervalMilliseconds: UInt64 = 10_000

    private struct Window {
        var startedAt: UInt64
        var failures: Int
    }

    private struct State {
        var windows: [String: Window] = [:]
        var loggedAt: UInt64?
        var unloggedFailures = 0
        var unloggedAddresses: Set<String> = []
    }

    private let state = NIOLockedValueBox(State())

    /// Milliseconds until `address` may try again, or `nil` when it may now.
    func refusal(for address: String, now: UInt64) -> UInt64? {
        state.withLockedValue { state in
            guard let window = state.windows[address], window.failures >= Self.maximumFailures else { return nil }
            let endsAt = window.startedAt + Self.windowMilliseconds
            return endsAt > now ? endsAt - now : nil
        }
    }

    /// Counts a failure of `address`. Returns what to log now, if anything: the first failure of a log
    /// interval alone, or the failures since the last line (`count`, from `addresses` addresses).
    func recordFailure(of address: String, now: UInt64) -> (count: Int, addresses: Int)? {
        state.withLockedValue { state in
            if var window = state.windows[address], now < window.startedAt + Self.windowMilliseconds {
                window.failures += 1
                state.windows[address] = window
            } else {
                if state.windows.count >= Self.maximumAddresses {
                    state.windows = state.windows.filter { now < $0.value.startedAt + Self.windowMilliseconds }
                }
                if state.windows.count < Self.maximumAddresses {
                    state.windows[address] = Window(startedAt: now, failures: 1)
                }
            }
            state.unloggedFailures += 1
            if state.unloggedAddresses.count < 1000 { state.unloggedAddresses.insert(address) }
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
