import ServiceLifecycle

/// Runs `body` every `interval` until a graceful shutdown begins (or the task is cancelled); with no
/// interval, just waits for the shutdown. The snapshot services' rhythm, standalone and cluster alike.
func repeatUntilGracefulShutdown(every interval: Duration?, _ body: () async -> Void) async {
    guard let interval else {
        try? await gracefulShutdown()
        return
    }
    while !Task.isShuttingDownGracefully {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        } catch {
            return  // shutting down (or cancelled)
        }
        await body()
    }
}
