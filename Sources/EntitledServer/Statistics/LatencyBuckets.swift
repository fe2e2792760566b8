/// The latency histogram's buckets: log-linear over nanoseconds, eight to each power of two (as
/// HdrHistogram lays out its sub-buckets), so a bucket is at most 1/8 of its value wide and a percentile
/// read off its middle is within about 7% of the exact value, from 8 ns to 68 s.
enum LatencyBuckets {
    /// Values of 2^36 ns (about 68.7 s) and more share the last bucket.
    static let count = 272

    /// The bucket of a duration in nanoseconds: a few instructions, no branches beyond the clamp.
    @inline(__always)
    static func index(ofNanoseconds value: UInt64) -> Int {
        if value < 8 { return Int(value) }
        let highestBit = 63 - value.leadingZeroBitCount
        let index = (highestBit - 2) * 8 + Int((value >> UInt64(highestBit - 3)) & 7)
        return index < count ? index : count - 1
    }

    /// The smallest duration (ns) of bucket `index`.
    static func lowerBound(of index: Int) -> UInt64 {
        if index < 8 { return UInt64(index) }
        let highestBit = index / 8 + 2
        return UInt64(8 + index % 8) << UInt64(highestBit - 3)
    }

    /// The first duration (ns) past bucket `index`.
    static func upperBound(of index: Int) -> UInt64 {
        index < 8 ? UInt64(index + 1) : lowerBound(of: index) + (UInt64(1) << UInt64(index / 8 - 1))
    }

    /// The middle of bucket `index`, in nanoseconds: what a percentile that falls in it reports.
    static func middle(of index: Int) -> Double {
        (Double(lowerBound(of: index)) + Double(upperBound(of: index))) / 2
    }

    /// The value (ns) at quantile `quantile` (0...1) of a histogram's `counts`, whose total is `total`:
    /// the middle of the bucket holding the rank-th smallest value, rank = ⌈quantile × total⌉.
    static func value(atQuantile quantile: Double, of counts: [UInt64], total: UInt64) -> Double {
        guard total > 0 else { return 0 }
        let rank = max(1, UInt64((quantile * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if seen >= rank { return middle(of: index) }
        }
        return middle(of: counts.count - 1)
    }
}
