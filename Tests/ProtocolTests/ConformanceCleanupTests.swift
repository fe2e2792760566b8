import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The conformance runner against a real server leaves nothing behind: every subject its requests named is
/// erased and every entitlement it defined is removed when the run ends.
///
/// Needs the `erase` and `undefine` operations (branch `wire`): before they are in the server, the runner
/// reports "CLEANUP SKIPPED" and this test fails on what is left.
@Suite("Conformance runner clean-up")
struct ConformanceCleanupTests {
    @Test func aConformanceRunLeavesNoSubjectOrEntitlementOnTheServer() throws {
        let server = try RunningEntitled()
        defer { server.stop() }
        let createdFile = server.directory.path + "/created.json"
        let run = try PythonRun(
            interpreter: PythonRun.interpreterWithJSONSchema(),
            ["Tools/conformance/run.py", "--host", "127.0.0.1", "--port", String(server.port), "--created-file", createdFile]
        )
        #expect(run.exitedNormally && run.status == 0, "run.py exited with status \(run.status):\n\(run.output)")
        #expect(run.output.contains("cleanup: erased "), "\(run.output)")

        let created = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: createdFile))) as? [String: [String]]
        let users = created?["users"] ?? []
        let devices = created?["devices"] ?? []
        let entitlements = created?["entitlements"] ?? []
        // The run did create things, so that finding none of them afterwards means something.
        #expect(users.count >= 10 && devices.count >= 5 && entitlements.count >= 3, "\(String(describing: created))")

        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        let catalog = try connection.send(.catalog).catalog ?? []
        #expect(catalog.filter { entitlements.contains($0.entitlement) }.isEmpty, "left in the catalog: \(catalog)")
        var left: [String] = []
        for (kind, ids) in [("user", users), ("device", devices)] {
            for id in ids {
                let user = kind == "user" ? id : nil
                let device = kind == "device" ? id : nil
                if try connection.send(.memberships(user: user, device: device)).memberships?.isEmpty != true { left.append("\(kind):\(id) memberships") }
                if try connection.send(.history(user: user, device: device)).history?.isEmpty != true { left.append("\(kind):\(id) history") }
            }
        }
        #expect(left.isEmpty, "left on the server: \(left.joined(separator: ", "))")
    }
}
