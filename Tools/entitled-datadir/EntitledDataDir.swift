import ArgumentParser
import EntitledCluster
import EntitledCore
import EntitledStorage
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The operator's tool for an `entitled` data directory (the files are specified in Protocol/STORAGE.md).
@main
struct EntitledDataDir: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled-datadir",
        abstract: "Verify an entitled data directory, back it up while the server runs, cut a damaged log back to its last good record, and copy a store between a data directory and a cluster's PostgreSQL. cut-log discards records: use it only after reading verify's report.",
        discussion: """
            When entitled refuses to start because a log or snapshot file is corrupt, run `verify` first: it \
            reads every file the way the server recovers (without the lock and without changing anything) and \
            names each damaged file and byte offset. Keep a copy of the data directory before any repair.

            `cut-log` is the explicit repair for a damaged log segment: it truncates the segment right after \
            its last good record. Every record after that point is lost for good, including acknowledged ones, \
            so use it only after reading verify's report and deciding that losing them is acceptable.

            `backup` copies a data directory while entitled runs on it into a new directory, consistent and \
            verified, from which a server starts.

            `to-postgres` copies a data directory into an empty cluster database (moving from one node to \
            several); `from-postgres` copies a cluster's database into a new data directory (a backup, or the \
            way back to one node). Neither needs the servers stopped on the database side; the data \
            directory must not be in use.
            """,
        subcommands: [Verify.self, CutLog.self, Backup.self, ToPostgres.self, FromPostgres.self]
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
            print(report.text)
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
                print(report.text)
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

extension EntitledDataDir {
    struct ToPostgres: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "to-postgres",
            abstract: "Copy a data directory into an empty cluster database.",
            discussion: """
                Reads the data directory as a starting server would (taking its lock, so it refuses while \
                entitled runs on it), creates entitled's tables in the database if missing, and stores the \
                whole state as the database's first snapshot. Refuses a database that already holds state. \
                Change numbers are kept: the cluster's next change follows the directory's last one.
                """
        )

        @Argument(help: "The data directory (entitled's --data-dir).")
        var directory: String

        @Option(help: ArgumentHelp("The cluster's database, as entitled's --postgres (default: ENTITLED_POSTGRES).", valueName: "url"))
        var postgres: String?

        func run() async throws {
            let location = try postgresLocation(postgres)
            let image: StoreImageSummary
            do throws(StorageError) {
                image = try StoreImageSummary.read(directory: directory)
            } catch {
                printError("entitled-datadir: cannot read \(directory): \(error.message)")
                throw ExitCode(1)
            }
            do throws(ClusterError) {
                try await ClusterMigration.importImage(image.image, into: location, logger: quietLogger)
            } catch {
                printError("entitled-datadir: \(error.message)")
                throw ExitCode(1)
            }
            print("copied \(directory) into \(location): \(image.memberships) memberships, change \(image.sequence)")
        }
    }

    struct FromPostgres: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "from-postgres",
            abstract: "Copy a cluster database into a new data directory (a backup).",
            discussion: """
                Reads the database's newest snapshot and every change after it in one consistent view (the \
                cluster goes on serving meanwhile) and writes them as one snapshot into a new or empty \
                directory, from which `entitled --data-dir` starts. Change numbers are kept.
                """
        )

        @Option(help: ArgumentHelp("The cluster's database, as entitled's --postgres (default: ENTITLED_POSTGRES).", valueName: "url"))
        var postgres: String?

        @Argument(help: "The directory to create (it must be new or empty).")
        var directory: String

        func run() async throws {
            let location = try postgresLocation(postgres)
            let image: StoreImage
            do throws(ClusterError) {
                image = try await ClusterMigration.exportImage(from: location, logger: quietLogger)
            } catch {
                printError("entitled-datadir: \(error.message)")
                throw ExitCode(1)
            }
            do throws(StorageError) {
                let written = try DurableStore.seed(directory: directory, with: image)
                print("copied \(location) into \(directory)/\(written.file): \(image.memberships.count - image.erasedMembershipCount) memberships, change \(image.sequence), \(written.bytes) bytes")
            } catch {
                printError("entitled-datadir: cannot write \(directory): \(error.message)")
                throw ExitCode(1)
            }
        }
    }
}

/// The database named by `--postgres`, else by ENTITLED_POSTGRES.
func postgresLocation(_ option: String?) throws -> PostgresLocation {
    guard let url = option ?? getenv("ENTITLED_POSTGRES").map({ String(cString: $0) }) else {
        printError("entitled-datadir: name the database with --postgres URL or ENTITLED_POSTGRES")
        throw ExitCode(2)
    }
    do throws(ClusterError) {
        return try PostgresLocation(url: url)
    } catch {
        printError("entitled-datadir: \(error.message)")
        throw ExitCode(2)
    }
}

/// PostgresNIO logs nothing a person running the tool needs; errors are printed by the tool.
let quietLogger = Logger(label: "entitled-datadir") { _ in SwiftLogNoOpLogHandler() }
