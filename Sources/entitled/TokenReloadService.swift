import EntitledServer
import Logging
import ServiceLifecycle
import UnixSignals

/// Re-reads the auth file on SIGHUP, the usual signal for "reload your configuration", until a graceful
/// shutdown begins. `EntitledServer.reloadAccessTokens()` does the work and logs the outcome; a broken file
/// leaves the tokens in force.
///
/// SIGHUP is trapped whether or not the server has `--auth`: its default action would end the server, and
/// an operator sending SIGHUP to reload means anything but that.
///
/// The signal is trapped (`trapHangups()`) as `serve()` begins, before the auth file is read and the data
/// directory recovered, which can take long: a SIGHUP received meanwhile waits in the trap and the file
/// is read again as soon as this service runs, alongside the server's start. Before the trap, from the
/// process's first instruction, SIGHUP is ignored (`EntitledMain`); the auth file has not been read
/// yet then, so the start itself reads what that SIGHUP asked for.
struct TokenReloadService: Service {
    let server: EntitledServer
    let logger: Logger
    private let hangups: UnixSignalsSequence

    /// Starts catching SIGHUP. The signals caught before the service runs are kept for it.
    static func trapHangups() async -> UnixSignalsSequence {
        await UnixSignalsSequence(trapping: .sighup)
    }

    init(server: EntitledServer, logger: Logger, hangups: UnixSignalsSequence) {
        self.server = server
        self.logger = logger
        self.hangups = hangups
    }

    func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            logger.info("SIGHUP: reloading the auth file")
            do throws(TokenReloadError) {
                try server.reloadAccessTokens()
            } catch .invalidFile {
                // Logged by the server, with the file and the reason.
            } catch {
                logger.warning("SIGHUP: \(error.message)")
            }
        }
    }
}
