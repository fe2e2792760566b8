import ArgumentParser
import EntitledStorage

extension EntitledDataDir {
    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a data directory, while entitled runs on it, into a new directory that a server starts from.",
            discussion: """
                Copies the newest snapshot and the log segments after it, each through its last whole record, \
                and checks the copy as a start would read it (the checks of `verify`). It needs no lock and \
                stops nothing: the copy holds every change acknowledged before the backup began, and perhaps \
                some made during it. When the server writes a snapshot meanwhile (and removes the log it \
                covers), the copy starts again from that snapshot. The destination must not exist; it is \
                created readable by its owner only. Start a server from it with `entitled --data-dir DEST`, \
                or copy it elsewhere as it is.

                Exit status: 0 when the copy is made and verified, 1 otherwise (a damaged source, a full or \
                unwritable destination); a destination left by a failure is incomplete.
                """
        )

        @Argument(help: "The data directory (entitled's --data-dir).")
        var directory: String

        @Argument(help: "The directory to create for the copy (it must not exist).")
        var destination: String

        func run() throws {
            do {
                let report = try DataDirectoryBackup.copy(from: directory, to: destination)
                let segments = report.segments.count == 1 ? "1 log segment" : "\(report.segments.count) log segments"
                let snapshot = report.snapshot.map { "\($0) and " } ?? "no snapshot, "
                print(
                    "copied \(directory) into \(destination): \(snapshot)\(segments), through change \(report.sequence) "
                        + "(\(report.membershipCount) memberships); verified"
                        + (report.restarts > 0 ? " (started again \(report.restarts) time(s): the server wrote snapshots meanwhile)" : "")
                )
            } catch {
                printError("entitled-datadir: backup failed: \(error.message)")
                throw ExitCode(1)
            }
        }
    }
}
