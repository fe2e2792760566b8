import EntitledTestSupport
import Foundation
import Testing

/// An erased person is gone from the console's history file too: the `erase` line is never written, and
/// after the server confirms the erasure every earlier line naming the id is taken out of the file.
@Suite struct HistoryErasureTests {
    /// The console on a real terminal, with its history in `historyPath`.
    func console(_ server: RunningEntitled, historyPath: String) throws -> PseudoTerminal {
        try PseudoTerminal.console(server, environment: ["ENTITLECTL_HISTFILE": historyPath])
    }

    func saved(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func anErasedUserLeavesNoLineInTheHistoryFileAndOthersStay() throws {
        let server = try RunningEntitled()
        let history = server.directory.path + "/history"
        let terminal = try console(server, historyPath: history)
        try terminal.waitFor("> ")
        try terminal.type("grant user:alice-42 prod_forgotten\r")
        try terminal.waitFor("prod_forgotten  active")
        try terminal.waitFor("> ")
        try terminal.type("grant user:bob-7 prod_kept\r")
        try terminal.waitFor("prod_kept  active")
        try terminal.waitFor("> ")
        try terminal.type("show user:alice-42\r")
        try terminal.waitFor("prod_forgotten")
        try terminal.waitFor("> ")
        try terminal.type(#"raw {"op":"customer","user":"alice-42"}"# + "\r")
        try terminal.waitFor(#""customer""#)
        try terminal.waitFor("> ")
        try terminal.type("ping\r")
        try terminal.waitFor("pong")
        try terminal.waitFor("> ")
        // Until the erasure, the lines naming her are there like any other.
        #expect(try saved(history).components(separatedBy: "alice-42").count == 4)

        try terminal.type("erase user:alice-42\r")
        try terminal.waitFor("erase user:alice-42? [y/N] ")
        try terminal.type("y\r")
        try terminal.waitFor("erased 1 membership")
        try terminal.waitFor("> ")
        // Rewritten at once, while the console still runs.
        let afterErase = try saved(history)
        #expect(!afterErase.contains("alice-42"), "\(afterErase)")
        #expect(afterErase.contains("prod_kept") && afterErase.contains("ping"), "\(afterErase)")

        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        let final = try saved(history)
        #expect(!final.contains("alice-42"), "\(final)")
        #expect(final.contains("bob-7") && final.contains("prod_kept"), "\(final)")
        let attributes = try FileManager.default.attributesOfItem(atPath: history)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aRawEraseIsNotRecordedAndForgetsTheDeviceToo() throws {
        let server = try RunningEntitled()
        let history = server.directory.path + "/history"
        let terminal = try console(server, historyPath: history)
        try terminal.waitFor("> ")
        try terminal.type("grant device:phone-gone prod_device\r")
        try terminal.waitFor("prod_device  active")
        try terminal.waitFor("> ")
        try terminal.type("check device:phone-kept prod_device\r")
        try terminal.waitFor("not active")
        try terminal.waitFor("> ")
        #expect(try saved(history).contains("phone-gone"))

        try terminal.type(#"raw {"op":"erase","device":"phone-gone"}"# + "\r")
        try terminal.waitFor(#""erased""#)
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        let final = try saved(history)
        #expect(!final.contains("phone-gone"), "\(final)")
        #expect(!final.contains("erase"), "\(final)")
        #expect(final.contains("phone-kept"), "\(final)")
    }

    @Test func aDeclinedEraseForgetsNothing() throws {
        let server = try RunningEntitled()
        let history = server.directory.path + "/history"
        let terminal = try console(server, historyPath: history)
        try terminal.waitFor("> ")
        try terminal.type("grant user:carol-3 prod_stays\r")
        try terminal.waitFor("prod_stays  active")
        try terminal.waitFor("> ")
        try terminal.type("erase user:carol-3\r")
        try terminal.waitFor("erase user:carol-3? [y/N] ")
        try terminal.type("n\r")
        try terminal.waitFor("nothing was erased")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        let final = try saved(history)
        #expect(final.contains("carol-3") && final.contains("prod_stays"), "\(final)")
        #expect(!final.contains("erase"), "\(final)")
    }
}
