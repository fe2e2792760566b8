import EntitledTestSupport
import Foundation
import Testing

/// What the real `entitled` warns about at start, so that an operator reading the log learns it before
/// clients do: a Unix socket every local user may write to without authentication, and a TLS certificate
/// that has expired (or soon will).
@Suite struct StartupWarningTests {
    @Test func aWorldWritableSocketWithoutAuthIsWarnedAboutAndAGroupSocketIsNot() throws {
        let directory = try TemporaryDirectory()
        let open = ServerProcess(
            arguments: ["--port", "0", "--socket", directory.path + "/open.sock", "--socket-mode", "666", "--data-dir", directory.path + "/a"],
            workingDirectory: directory.path
        )
        _ = try open.startAndWaitUntilReady()
        #expect(open.waitForStandardError(containing: "writable by every user", timeout: .seconds(10)))
        _ = open.stop()

        let group = ServerProcess(
            arguments: ["--port", "0", "--socket", directory.path + "/group.sock", "--socket-mode", "660", "--data-dir", directory.path + "/b"],
            workingDirectory: directory.path
        )
        _ = try group.startAndWaitUntilReady()
        _ = group.stop()
        #expect(!group.standardErrorText().contains("writable by every user"))
    }

    @Test func anExpiredTLSCertificateIsWarnedAboutAtStart() throws {
        let directory = try TemporaryDirectory()
        let server = ServerProcess(
            arguments: ["--port", "0", "--tls-cert", TLSTrustTests.expired.0, "--tls-key", TLSTrustTests.expired.1, "--data-dir", directory.path + "/d"],
            workingDirectory: directory.path
        )
        _ = try server.startAndWaitUntilReady()
        #expect(server.waitForStandardError(containing: "the TLS certificate expired", timeout: .seconds(10)), "\(server.standardErrorText())")
        _ = server.stop()
    }
}
