import ArgumentParser
import Foundation

/// The options every command has: which entitled it runs, and where the data directories go.
struct CommonOptions: ParsableArguments {
    @Option(help: "The entitled binary (default: entitled next to this executable, in the same build folder).")
    var entitled: String?

    @Option(name: .customLong("work-dir"), help: "Where the temporary data directories go (a real disk, for fsync to mean anything).")
    var workDir = NSTemporaryDirectory()

    /// A fresh directory under --work-dir, removed at the end (`cleanup`).
    func workRoot(prefix: String) throws -> String {
        try cleanup.makeTemporaryDirectory(in: workDir.hasSuffix("/") ? String(workDir.dropLast()) : workDir, prefix: prefix)
    }
}
