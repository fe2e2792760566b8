import Testing

@testable import EntitledServer

@Suite struct LatencyBucketsTests {
    @Test func everyDurationFallsInsideItsBucketWhichIsAtMostAnEighthOfItsValueWide() {
        var durations: [UInt64] = Array(0..<5000)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20000 { durations.append(UInt64.random(in: 1..<(1 << 36), using: &generator)) }
        for duration in durations {
            let index = LatencyBuckets.index(ofNanoseconds: duration)
            let (lower, upper) = (LatencyBuckets.lowerBound(of: index), LatencyBuckets.upperBound(of: index))
            #expect(lower <= duration && duration < upper, "\(duration) ns in bucket \(index) [\(lower), \(upper))")
            if duration >= 8 { #expect((upper - lower) * 8 <= lower, "bucket \(index) is too wide") }
        }
    }

    @Test func bucketsFollowEachOtherWithoutGapsUpToTheLast() {
        for index in 0..<(LatencyBuckets.count - 1) {
            #expect(LatencyBuckets.upperBound(of: index) == LatencyBuckets.lowerBound(of: index + 1))
        }
        #expect(LatencyBuckets.index(ofNanoseconds: .max) == LatencyBuckets.count - 1)
    }

    @Test func percentilesAreWithinTheBucketPrecisionOfTheExactValues() {
        // 1 µs to 1 ms in even steps: the exact p50 is 500.5 µs, p99 990 µs.
        var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
        for microseconds in 1...1000 { counts[LatencyBuckets.index(ofNanoseconds: UInt64(microseconds) * 1000)] += 1 }
        for (quantile, exact) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0)] {
            let estimate = LatencyBuckets.value(atQuantile: quantile, of: counts, total: 1000)
            #expect(abs(estimate - exact) / exact < 0.07, "p\(quantile * 100): \(estimate) against \(exact)")
        }
        #expect(LatencyBuckets.value(atQuantile: 0.5, of: counts, total: 0) == 0)
    }
}
