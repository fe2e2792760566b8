import Logging
import NIOConcurrencyHelpers
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT, trapped from the moment `serve()` begins to the end of the process, and what the
/// phase the server is in does with them: before it listens, it stops before binding; while it loads, the
/// load gives up at its next step (`LoadingProgress.requestStop()`) and the server stops without serving;
/// once it serves, the service group shuts down gracefully (final snapshot included).
///
/// One trap for every phase, rather than the service group's own (`gracefulShutdownSignals`), which is
/// set only once the group runs: before that, a SIGTERM took its default action, killing a loading
/// server with no log line and its Unix socket file left behind. Handing the trap over to the group
/// would leave a moment where a signal, already ignored for the trap, reached nobody.
final class StopSignals: Sendable {
    private struct State {
        var received: Int32?
        var action: (@Sendable () -> Void)?
    }

    private let state = NIOLockedValueBox(State())
    private let logger: Logger
    /// The dispatch sources that deliver the signals, kept for the life of the process.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    private init(logger: Logger) {
        self.logger = logger
    }

    /// Starts trapping SIGTERM and SIGINT. Until `onStop(_:)` names an action, a signal is only kept.
    ///
    /// Delivered on a dispatch queue of its own, not through a task: the load runs on Swift's cooperative
    /// threads and may hold every one of them (a one-core host has one) until it ends, and a signal that
    /// waited for a free one would stop the load only after it finished (found in review).
    static func trap(logger: Logger) -> StopSignals {
        let stop = StopSignals(logger: logger)
        let queue = DispatchQueue(label: "entitled.stop-signals")
        for number in [SIGTERM, SIGINT] {
            // Ignored first, so that the default action (ending the process) no longer applies.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { stop.receive(number) }
            source.resume()
            stop.sources.append(source)
        }
        return stop
    }

    /// Whether a stop was asked for.
    var isRequested: Bool { state.withLockedValue { $0.received != nil } }

    /// From now on a stop signal runs `action`; at once when one came already.
    func onStop(_ action: @escaping @Sendable () -> Void) {
        let already = state.withLockedValue { state in
            state.action = action
            return state.received != nil
        }
        if already { action() }
    }

    private func receive(_ signal: Int32) {
        let (first, action) = state.withLockedValue { state in
            let first = state.received == nil
            if first { state.received = signal }
            return (first, state.action)
        }
        if first { logger.info("\(signal == SIGINT ? "SIGINT" : "SIGTERM"): stopping") }
        action?()
    }
}
