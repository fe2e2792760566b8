import EntitledTestSupport
import Foundation

/// A tmpfs of a fixed size mounted for one test: a real disk that runs full.
struct TinyFileSystem {
    let path: String

    /// Why a tmpfs cannot be mounted here (mounting needs root, CAP_SYS_ADMIN), or `nil` when it can:
    /// tried once, in a scratch directory.
    static let mountRefusal: String? = {
        guard let directory = try? TemporaryDirectory() else { return "no temporary directory" }
        do {
            let probe = try TinyFileSystem(at: directory.path + "/probe", kilobytes: 64)
            probe.unmount()
            return nil
        } catch {
            return "\(error)"
        }
    }()

    static var canMount: Bool { mountRefusal == nil }

    init(at path: String, kilobytes: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (status, output) = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
        guard status == 0 else {
            throw TestSupportFailure(description: "mount -t tmpfs at \(path) failed (status \(status)): \(output)")
        }
        self.path = path
    }

    /// Unmounts it, lazily, so that a file a killed process still had open cannot keep it mounted.
    func unmount() {
        _ = Self.run("/bin/umount", ["-l", path])
    }

    private static func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
