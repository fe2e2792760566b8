/// Where an export's lines go: a file put in place only once complete (`ExportFile`), or standard
/// output as they come (`ExportStream`).
public protocol ExportSink: AnyObject {
    /// Appends `lines`, each followed by a newline.
    func write(_ lines: [String]) throws(ExportFailure)
    /// The export is complete: make what was written what the destination holds.
    func finish() throws(ExportFailure)
    /// The export failed: leave nothing of it behind where that can be done.
    func discard()
}

/// Standard output (or any text stream): lines are passed on at once, a page at a time; nothing can be
/// taken back after a failure, so the command's message says the copy is incomplete.
public final class ExportStream: ExportSink {
    private let output: (String) -> Void
    /// Whether any line went out: a failure after that leaves an incomplete copy behind.
    public private(set) var wroteLines = false

    /// - Parameter output: receives a block of lines without its final newline, as the console's
    ///   standard output takes text.
    public init(output: @escaping (String) -> Void) {
        self.output = output
    }

    public func write(_ lines: [String]) throws(ExportFailure) {
        guard !lines.isEmpty else { return }
        output(lines.joined(separator: "\n"))
        wroteLines = true
    }

    public func finish() throws(ExportFailure) {}

    public func discard() {}
}
