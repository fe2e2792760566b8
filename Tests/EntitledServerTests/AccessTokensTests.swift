import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

/// The auth file: what is accepted, what is refused at start and why, and matching a presented token.
@Suite struct AccessTokensTests {
    func load(_ json: String) throws -> AccessTokens {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/auth.json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return try AccessTokens(contentsOfFile: path)
    }

    @Test func aValidFileGivesEachTokenItsNameAndRole() throws {
        let tokens = try load(#"[{"name":"billing","token":"0123456789abcdef0123","role":"admin"},{"name":"api","token":"fedcba9876543210fedc","role":"check"}]"#)
        #expect(tokens.authenticate("0123456789abcdef0123")?.name == "billing")
        #expect(tokens.authenticate("fedcba9876543210fedc")?.role == .check)
    }

    @Test(arguments: [
        ("0123456789abcdef012", "a prefix"),
        ("0123456789abcdef01234", "an extension"),
        ("1123456789abcdef0123", "one byte changed"),
        ("", "nothing"),
        // Canonically equivalent to nothing in the file, and not normalised: tokens are bytes.
        ("0123456789abcdef0123\u{0301}", "a combining mark added"),
    ])
    func onlyTheExactBytesOfATokenAuthenticate(presented: String, what: String) throws {
        let tokens = try AccessTokens(entries: [AccessToken(name: "billing", token: "0123456789abcdef0123", role: .admin)])
        #expect(tokens.authenticate(presented) == nil, "\(what)")
    }

    @Test(arguments: [
        (#"{"name":"a"}"#, "auth_file_malformed"),
        ("not json", "auth_file_malformed"),
        ("[]", "auth_file_empty"),
        (#"[{"name":"a","token":"0123456789abcdef"}]"#, "auth_file_malformed"),
        (#"[{"name":"a","token":"short","role":"admin"}]"#, "auth_file_invalid_entry"),
        (#"[{"name":"a","token":"0123456789abcdef","role":"root"}]"#, "auth_file_invalid_entry"),
        (#"[{"name":"","token":"0123456789abcdef","role":"admin"}]"#, "auth_file_invalid_entry"),
        (#"[{"name":"a","token":"0123456789abcdef","role":"admin"},{"name":"a","token":"0123456789abcdeg","role":"check"}]"#, "auth_file_duplicate_name"),
        (#"[{"name":"a","token":"0123456789abcdef","role":"admin"},{"name":"b","token":"0123456789abcdef","role":"check"}]"#, "auth_file_invalid_entry"),
    ])
    func aBadFileIsRefusedWithAReasonThatNeverQuotesAToken(json: String, code: String) throws {
        do {
            _ = try load(json)
            Issue.record("\(json) was accepted")
        } catch let error as AuthFileError {
            #expect(error.code == code, "\(json): \(error.message)")
            #expect(!error.message.contains("0123456789abcde"), "\(error.message)")
        }
    }

    @Test func aMissingFileSaysSo() {
        #expect(throws: AuthFileError.unreadable(path: "/nonexistent/auth.json", reason: "no such file")) {
            try AccessTokens(contentsOfFile: "/nonexistent/auth.json")
        }
    }

    @Test func theDescriptionOfATokenShowsItsNameAndRoleOnly() {
        let token = AccessToken(name: "billing", token: "0123456789abcdef0123", role: .admin)
        #expect("\(token)" == "billing (admin)")
    }
}
