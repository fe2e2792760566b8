import EntitledTestSupport
import Foundation
import Testing

/// `--token-file PATH`: the token from a file's first line, never in argv or the environment.
@Suite struct TokenFileTests {
    let admin = AuthFileEntry.admin.token

    @Test func theFirstLineWithoutSurroundingWhitespaceIsTheToken() throws {
        let server = try RunningEntitled.requiringTokens()
        // Written on Windows, indented, and followed by a comment line that is not part of the token.
        let file = try server.writeFile("token", "  \(admin) \r\nrotated 2026-11-01\n")
        let run = try ConsoleRun.run(server.portOption + ["--token-file", file, "grant", "user:u1", "prod_pro"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    @Test func aFileWithoutALineEndWorksToo() throws {
        let server = try RunningEntitled.requiringTokens()
        let file = try server.writeFile("token", admin)
        let run = try ConsoleRun.run(server.portOption + ["--token-file", file, "grant", "user:u1", "prod_pro"])
        #expect(run.status == 0, "\(run.standardError)")
    }

    @Test func theFileWinsOverTheEnvironmentVariable() throws {
        let server = try RunningEntitled.requiringTokens()
        let file = try server.writeFile("token", admin + "\n")
        let run = try ConsoleRun.run(
            server.portOption + ["--token-file", file, "grant", "user:u1", "prod_pro"], environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token]
        )
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    @Test func bothTokenOptionsAtOnceAreAUsageErrorThatDoesNotShowTheToken() throws {
        let server = try RunningEntitled.requiringTokens()
        let file = try server.writeFile("token", admin + "\n")
        let run = try ConsoleRun.run(server.portOption + ["--token", admin, "--token-file", file, "grant", "user:u1", "prod_pro"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("give the token with --token or with --token-file, not both"))
        #expect(!run.standardError.contains(admin))
        #expect(try server.actors(of: "user:u1").isEmpty)
    }

    @Test func aMissingFileIsAClearErrorAndNothingIsSent() throws {
        let server = try RunningEntitled.requiringTokens()
        let missing = server.directory.path + "/missing"
        let run = try ConsoleRun.run(server.portOption + ["--token-file", missing, "grant", "user:u1", "prod_pro"])
        #expect(run.status == 2)
        #expect(run.standardError == "error: cannot read the token file \(missing): no such file or directory\n")
        #expect(try server.actors(of: "user:u1").isEmpty)
    }

    @Test func aDirectoryIsNotATokenFile() throws {
        let server = try RunningEntitled.requiringTokens()
        let run = try ConsoleRun.run(server.portOption + ["--token-file", server.directory.path, "ping"])
        #expect(run.status == 2)
        #expect(run.standardError == "error: cannot read the token file \(server.directory.path): is a directory\n")
    }

    @Test(arguments: ["", "\n", "   \t\r\n", "\nthe token on the second line\n"])
    func aFileWhoseFirstLineIsBlankIsEmpty(contents: String) throws {
        let server = try RunningEntitled.requiringTokens()
        let file = try server.writeFile("token", contents)
        let run = try ConsoleRun.run(server.portOption + ["--token-file", file, "ping"])
        #expect(run.status == 2)
        #expect(run.standardError == "error: the token file \(file) is empty: its first line must hold the token\n")
        #expect(run.standardOutput.isEmpty)
    }

    @Test func aFileOtherUsersCanReadGetsAWarningButStillWorks() throws {
        let server = try RunningEntitled.requiringTokens()
        let file = try server.writeFile("token", admin + "\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        let run = try ConsoleRun.run(server.portOption + ["--token-file", file, "ping"])
        #expect(run.status == 0)
        #expect(run.standardError == "warning: other users of this machine can read the token file \(file); chmod 600 it\n")
    }
}
