import Histogram

/// Latency percentiles of a set of samples, in milliseconds (the unit the durability table prints).
struct LatencySummary: Codable, Sendable {
    let count: Int
    let p50Ms, p99Ms, p999Ms, maxMs, meanMs: Double

    /// Summarizes nanosecond samples (at most a few million, so sorting them is cheap enough).
    init(nanoseconds samples: [UInt64]) {
        let sorted = samples.sorted()
        // Nearest rank: the smallest sample with at least `fraction` of the samples at or below it.
        func percentile(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((fraction * Double(sorted.count)).rounded(.up))
            return Double(sorted[min(max(rank, 1), sorted.count) - 1]) / 1e6
        }
        count = sorted.count
        (p50Ms, p99Ms, p999Ms) = (percentile(0.50), percentile(0.99), percentile(0.999))
        maxMs = Double(sorted.last ?? 0) / 1e6
        meanMs = sorted.isEmpty ? 0 : Double(sorted.reduce(0, &+)) / Double(sorted.count) / 1e6
    }

    /// Summarizes a histogram of nanoseconds.
    init(histogram: Histogram<UInt64>) {
        count = Int(histogram.totalCount)
        p50Ms = Double(histogram.valueAtPercentile(50)) / 1e6
        p99Ms = Double(histogram.valueAtPercentile(99)) / 1e6
        p999Ms = Double(histogram.valueAtPercentile(99.9)) / 1e6
        maxMs = Double(histogram.max) / 1e6
        meanMs = histogram.mean / 1e6
    }
}

/// The median of some values (the mean of the middle two for an even count); 0 for none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
