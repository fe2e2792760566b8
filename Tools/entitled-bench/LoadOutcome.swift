import Histogram

/// What a measured load is: `pipeline` requests sent together per connection, the next batch once all are
/// answered (as `redis-benchmark -P` does; 1 is a closed loop).
struct LoadShape: Sendable, Codable {
    var connections, pipeline, users: Int
    var distribution: KeyDistribution
    var mix: OperationMix
}

/// What a measured load saw, as `entitled-loadgen` reported it, and the CPU time around it.
struct LoadOutcome: Sendable {
    /// Every request's latency in the window, in nanoseconds (from its batch's send to its answer), and the checks' alone.
    var histogram = Self.latencyHistogram(), checkHistogram = Self.latencyHistogram()
    var answered = 0, errors = 0, inactive = 0
    var firstError: String?
    var windowSeconds = 0.0
    /// CPU time (user and system, all threads) the server and the generator used over the window, when read.
    var serverCPUSeconds, generatorCPUSeconds: Double?

    var requestsPerSecond: Double { windowSeconds > 0 ? Double(answered) / windowSeconds : 0 }

    static func latencyHistogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    }

    mutating func merge(_ other: LoadOutcome) {
        histogram.add(other.histogram)
        checkHistogram.add(other.checkHistogram)
        (answered, errors, inactive) = (answered + other.answered, errors + other.errors, inactive + other.inactive)
        firstError = firstError ?? other.firstError
    }
}
