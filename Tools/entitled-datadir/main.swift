import ArgumentParser
import EntitledStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The operator's tool for an `entitled` data directory (the files are specified in Protocol/STORAGE.md).
struct EntitledDataDir: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled-datadir",
        abstract: "Verify an entitled data directory, and cut a damaged log back to its last good record. cut-log discards records: use it only after reading verify's report.",
        discussion: """
            When entitled refuses to start because a log or snapshot file is corrupt, run `verify` first: it \
            reads every file the way the server recovers (without the lock and without changing anything) and \
            names each damaged file and byte offset. Keep a copy of the data directory before any repair.

            `cut-log` is the explicit repair for a damaged log segment: it truncates the segment right after \
            its last good record. Every record after that point is lost for good, including acknowledged ones, \
            so use it only after reading verify's report and deciding that losing them is acceptable.
            """,
        subcommands: [Verify.self, CutLog.self]
    )
}

extension EntitledDataDir {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every file of a data directory without changing anything.",
            discussion: """
                Checks the snapshots, every log segment (framing, checksums, record contents) and that the \
                records after the newest snapshot continue it without a gap: the rules entitled applies at \
                start. Prints one line per file (kind, size, changes held, status) and a verdict.

                Exit status: 0 when the verdict is ok or ok-with-torn-tail (a torn last record the server \
                drops at start; it was never acknowledged), 1 when the directory is damaged (the server \
                would refuse to start).
                """
        )

        @Argument(help: "The data directory (entitled's --data-dir).")
        var directory: String

        func run() throws {
            let report = DataDirectoryInspector.verify(directory: directory)
            print(report)
            if report.verdict == .damaged { throw ExitCode(1) }
        }
    }

    struct CutLog: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cut-log",
            abstract: "Discard every record of a log segment after its last good one. Use only after reading verify's report.",
            discussion: """
                Takes the data directory's lock (so it refuses while entitled runs), checks the segment and \
                truncates it right after its last record that passes every check, then syncs it to disk. \
                Prints the offset it cut at, how many bytes and (about) how many records it dropped, and the \
                last change the segment still holds. An intact segment is left unchanged.

                The dropped records are gone for good. If a newer segment follows the one cut, the history \
                can have a gap afterwards; the tool says so, and `verify` shows the details.
                """
        )

        @Argument(help: "The data directory (entitled's --data-dir).")
        var directory: String

        @Argument(help: "The log segment to cut: its name as verify prints it (log-<20 digits>.wal), or a path to it.")
        var segment: String

        func run() throws {
            do {
                let report = try DataDirectoryInspector.cutLog(directory: directory, file: segment)
                print(report)
            } catch {
                printError("entitled-datadir: \(error.message)")
                throw ExitCode(1)
            }
        }
    }
}

/// Writes `line` to standard error (the C `stderr` global is not concurrency-safe in Swift 6).
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

EntitledDataDir.main()
