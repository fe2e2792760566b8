import Testing

@testable import EntitledServer

/// How `AuthenticationThrottle` groups client addresses, in process (its effect on a real `entitled` is in
/// EntitledTests' AuthenticationThrottleTests): an IPv4 address alone, an IPv6 address by its /64, loopback
/// never throttled.
@Suite struct AuthenticationThrottleGroupingTests {
    @Test func addressesAreCountedByIPv4AddressAndIPv6Slash64() {
        #expect(AuthenticationThrottle.group(of: "192.0.2.7") == "192.0.2.7")
        #expect(AuthenticationThrottle.group(of: "::ffff:192.0.2.7") == "192.0.2.7")
        #expect(AuthenticationThrottle.group(of: "2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(AuthenticationThrottle.group(of: "2001:db8:1:2:ffff:eeee:dddd:cccc") == "2001:db8:1:2::/64")
        #expect(AuthenticationThrottle.group(of: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(AuthenticationThrottle.isLoopback("127.0.0.1"))
        #expect(AuthenticationThrottle.isLoopback("127.9.8.7"))
        #expect(AuthenticationThrottle.isLoopback("::1"))
        #expect(AuthenticationThrottle.isLoopback("::ffff:127.0.0.1"))
        #expect(!AuthenticationThrottle.isLoopback("192.0.2.7"))
        #expect(!AuthenticationThrottle.isLoopback("::2"))
    }

    @Test func oneIPv6HostWithManyAddressesIsThrottledAsOne() {
        let throttle = AuthenticationThrottle()
        for index in 0..<10 {
            _ = throttle.recordFailure(of: "2001:db8:1:2::\(String(index + 1, radix: 16))", now: 1_000)
        }
        #expect(throttle.refusal(for: "2001:db8:1:2:abcd::9", now: 2_000) != nil)
        #expect(throttle.refusal(for: "2001:db8:1:3::1", now: 2_000) == nil)
        #expect(throttle.refusal(for: "2001:db8:1:2::1", now: 1_000 + AuthenticationThrottle.windowMilliseconds) == nil)
    }
}
