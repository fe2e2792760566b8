import Dispatch

/// The entry point: runs `EntitledCommand` on Swift concurrency's global executor while the main thread
/// waits for it.
///
/// Not an async `main` (what `@main` on an `AsyncParsableCommand` gives): on Linux that parks the main
/// thread in libdispatch's `dispatch_main`, whose `sigsuspend` passes a signal mask in read-only memory,
/// and valgrind 3.19 writes to that mask (to keep its own signal unblocked) and crashes. Nothing in the
/// server runs on the main actor, so the main thread has nothing else to do than wait; signals (SIGTERM,
/// SIGINT) still reach the process as before.
@main
enum EntitledMain {
    static func main() {
        let finished = DispatchSemaphore(value: 0)
        // Detached: `main` is on the main actor, whose queue nobody drains while this thread waits.
        Task.detached {
            await EntitledCommand.main()  // exits the process itself on an error, with its exit code
            finished.signal()
        }
        finished.wait()
    }
}
