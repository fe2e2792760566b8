import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Removes an export's temporary file when the console is interrupted (Ctrl-C, a `kill`, a closed
/// terminal) while it writes one, so that an interrupted export, like a failed one, leaves no half file:
/// the process would otherwise end at once and leave `.FILE.export-XXXXXX` behind.
///
/// While a file is registered, SIGINT, SIGTERM and SIGHUP run a handler that unlinks it (`unlink` may be
/// called in a handler) and then ends the process by the same signal, as it would have ended; the
/// actions the process had are put back when the file is finished or discarded. A SIGKILL cannot be
/// caught: a file left by one is recognized by its name.
///
/// One file at a time, as the console writes one export at a time: a second registration takes the
/// place of the first (tests that make several files at once), and only the file registered last is
/// removed by a signal.
enum InterruptCleanup {
    private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// The path the handler removes, as a C string. A handler may not take a lock, so it reads this
    /// alone; it is set before the handlers are installed and cleared after they are put back.
    nonisolated(unsafe) private static var handlerPath: UnsafeMutablePointer<CChar>?

    /// The registered path and the actions the signals had before, changed under the lock.
    private struct Registration: @unchecked Sendable {
        var path: String
        var previous: [Int32: sigaction]
    }
    private static let registration = Mutex<Registration?>(nil)

    /// Removes `temporaryPath` if one of the signals ends the process before `unregister(_:)`.
    static func register(_ temporaryPath: String) {
        registration.withLock { current in
            if let current { restore(current) }
            handlerPath = strdup(temporaryPath)
            var previous: [Int32: sigaction] = [:]
            for signal in signals {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { signal in
                    if let path = InterruptCleanup.handlerPath { unlink(path) }
                    // End as the signal would have ended the process: its status says so to the shell.
                    Glibc.signal(signal, SIG_DFL)
                    raise(signal)
                }
                sigemptyset(&action.sa_mask)
                var old = sigaction()
                if sigaction(signal, &action, &old) == 0 { previous[signal] = old }
            }
            current = Registration(path: temporaryPath, previous: previous)
        }
    }

    /// Puts back the actions the signals had, if `temporaryPath` is the file registered.
    static func unregister(_ temporaryPath: String) {
        registration.withLock { current in
            guard let registered = current, registered.path == temporaryPath else { return }
            restore(registered)
            current = nil
        }
    }

    /// Puts back the actions of `registered`, then forgets its path.
    private static func restore(_ registered: Registration) {
        for (signal, old) in registered.previous {
            var old = old
            sigaction(signal, &old, nil)
        }
        let path = handlerPath
        handlerPath = nil
        free(path)
    }
}
