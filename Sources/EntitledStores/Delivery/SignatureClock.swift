/// The time checks of signed webhooks, on untrusted numbers: no subtraction or `abs` that could trap.
enum SignatureClock {
    /// Whether `timestamp` (a sender's Unix seconds) is at most `tolerance` seconds from `now`.
    static func isWithin(_ tolerance: Int64, of now: Int64, _ timestamp: Int64) -> Bool {
        let (difference, overflow) = now.subtractingReportingOverflow(timestamp)
        return !overflow && difference.magnitude <= tolerance.magnitude
    }
}
