import Foundation

/// The progress of an import on standard error: on a terminal, one line redrawn in place (a bar when the
/// total is known, the count, the rate, the time left); otherwise a plain line every `plainInterval`, for a
/// log file.
public final class ImportProgress: @unchecked Sendable {
    public let total: Int?
    private let isTerminal: Bool
    private let started = ContinuousClock.now
    private var lastDrawn = ContinuousClock.now
    private let plainInterval: Duration
    private var done = 0
    private var failed = 0
    private let lock = NSLock()
    private let label: String

    public init(label: String, total: Int?, isTerminal: Bool = isatty(STDERR_FILENO) == 1, plainInterval: Duration = .seconds(5)) {
        self.label = label
        self.total = total
        self.isTerminal = isTerminal
        self.plainInterval = plainInterval
    }

    public func advance(failed didFail: Bool) {
        let line: String? = lock.withLock {
            done += 1
            if didFail { failed += 1 }
            let now = ContinuousClock.now
            let interval: Duration = isTerminal ? .milliseconds(100) : plainInterval
            guard now - lastDrawn >= interval else { return nil }
            lastDrawn = now
            return render(now: now)
        }
        if let line { draw(line) }
    }

    /// Says that `count` identifiers wait `wait` to be tried again (the store or `entitled` unavailable),
    /// at once: nothing advances meanwhile, and a log would otherwise say nothing for the whole wait.
    public func retrying(_ count: Int, after wait: Duration) {
        let line = lock.withLock {
            lastDrawn = .now
            return render(now: .now) + "  \(count) to try again in \(wait.components.seconds)s (the store or entitled unavailable)"
        }
        draw(line)
    }

    /// The last state, and a line end on a terminal.
    public func finish() {
        let line = lock.withLock { render(now: .now) }
        draw(line)
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func render(now: ContinuousClock.Instant) -> String {
        let elapsed = max(0.001, Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18)
        let rate = Double(done) / elapsed
        var parts: [String] = [label]
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            if isTerminal {
                let width = 24
                let filled = Int(fraction * Double(width))
                parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]")
            }
            parts.append("\(done)/\(total)")
            if rate > 0, done < total { parts.append("ETA \(Self.clock(Double(total - done) / rate))") }
        } else {
            parts.append("\(done)")
        }
        parts.append(String(format: "%.0f/s", rate))
        if failed > 0 { parts.append("\(failed) failed") }
        return parts.joined(separator: "  ")
    }

    private func draw(_ line: String) {
        FileHandle.standardError.write(Data((isTerminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 3600 ? String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60) : String(format: "%d:%02d", whole / 60, whole % 60)
    }
}
