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
/// The signal is trapped when the service is made, before the server is ready: a SIGHUP sent as soon as
/// the ready line appears must not find the default action still in place.
struct TokenReloadService: Service {
    let server: EntitledServer
    let logger: Logger
    private let hangups: UnixSignalsSequence

    init(server: EntitledServer, logger: Logger) async {
        self.server = server
        self.logger = logger
        hangups = await UnixSignalsSequence(trapping: .sighup)
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
