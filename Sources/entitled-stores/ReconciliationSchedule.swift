import EntitledStores
import Foundation
import Logging
import ServiceLifecycle

/// Runs the reconciliation every `interval` inside `serve`: when the last run (kept in the state directory,
/// so that restarts neither skip it nor repeat it) is `interval` old, checking once a minute. A run holds
/// the state directory's reconciliation lock, so that `entitled-stores reconcile` started meanwhile by
/// hand waits instead of doing the same work at once.
struct ReconciliationSchedule: Service {
    let interval: Duration
    let stateDirectory: String
    let logger: Logger
    let run: @Sendable () async -> Void

    var lastRunFile: String { stateDirectory + "/reconciliation.last" }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = Date().timeIntervalSince1970
                if let last = lastRun(), now - last < Double(interval.components.seconds) {
                    try await Task.sleep(for: .seconds(min(60, Double(interval.components.seconds) - (now - last) + 1)))
                    continue
                }
                var finished = false
                await ReconciliationLock.holding(in: stateDirectory) {
                    await run()
                    finished = !Task.isCancelled
                }
                // A run cut short by a shutdown (or never begun, waiting for the lock) is not the
                // interval's run: recorded, the next start would wait a whole interval with memberships
                // left unchecked.
                guard finished else {
                    logger.notice("reconciliation cut short by the shutdown: the next start runs it again")
                    return
                }
                try? String(Int64(Date().timeIntervalSince1970)).write(toFile: lastRunFile, atomically: true, encoding: .utf8)
            }
        }
    }

    /// When the last run finished (Unix seconds), if one did.
    func lastRun() -> TimeInterval? {
        (try? String(contentsOfFile: lastRunFile, encoding: .utf8)).flatMap { TimeInterval($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}

/// One reconciliation at a time per state directory: an advisory lock (`flock`) on a file in it, released
/// by the kernel if the process dies.
enum ReconciliationLock {
    static func holding(in directory: String, _ body: () async -> Void) async {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let descriptor = open(directory + "/reconciliation.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { if descriptor >= 0 { close(descriptor) } }
        if descriptor >= 0 {
            // Waits without blocking a thread of the cooperative pool.
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { return }
            }
        }
        await body()
    }
}
