import Foundation

/// This machine's PostgreSQL programs, and the user a test's server runs as.
///
/// Debian's `postgresql-N` packages put the server's programs in `/usr/lib/postgresql/N/bin`, off the
/// PATH (only `psql` and friends get wrappers in /usr/bin): the newest N there is taken, else the
/// programs found on the PATH. PostgreSQL refuses to run as root, so when the tests run as root the
/// server runs as the `postgres` system user the Debian package creates, through `setpriv` (or `runuser`).
public struct PostgresInstallation: Sendable {
    public let initdb: String
    public let pgCtl: String
    public let postgres: String
    public let psql: String
    /// Copies a running server's data into a new standby's data directory (`PostgresServer(standbyOf:through:)`).
    public let pgBasebackup: String
    /// The user the server's programs run as: nil runs them as this process's own user.
    public let serverUser: ServerUser?

    /// A system user, by name and ids, and the program that switches to it.
    public struct ServerUser: Sendable {
        public let name: String
        public let uid: uid_t
        public let gid: gid_t
        /// `setpriv --reuid ... --` or `runuser -u NAME --`: what goes before the command.
        public let prefix: [String]
    }

    /// The oldest release the issue names (PostgreSQL 14 or later).
    public static let oldestSupportedMajorVersion = 14

    /// This machine's installation, found once; the failure says what is missing and how to get it.
    public static let found: Result<PostgresInstallation, PostgresServerError> = find()

    static func find() -> Result<PostgresInstallation, PostgresServerError> {
        let install = "install Debian's postgresql package (apt-get install postgresql; Tools/test.sh does it as root)"
        guard let directory = newestDebianBinDirectory() else {
            // No Debian layout: every program from the PATH.
            guard let initdb = onPath("initdb"), let pgCtl = onPath("pg_ctl"), let postgres = onPath("postgres"),
                let psql = onPath("psql"), let pgBasebackup = onPath("pg_basebackup")
            else {
                return .failure(
                    .unavailable(reason: "no initdb, pg_ctl, postgres, psql and pg_basebackup in /usr/lib/postgresql/*/bin or on the PATH; \(install)")
                )
            }
            return withServerUser(initdb: initdb, pgCtl: pgCtl, postgres: postgres, psql: psql, pgBasebackup: pgBasebackup)
        }
        // psql and pg_basebackup come with Debian's postgresql-client-N, which postgresql-N depends on.
        guard let psql = inOrOnPath("psql", directory: directory), let pgBasebackup = inOrOnPath("pg_basebackup", directory: directory) else {
            return .failure(.unavailable(reason: "no psql or pg_basebackup in \(directory) or on the PATH; install Debian's postgresql-client package"))
        }
        return withServerUser(
            initdb: directory + "/initdb", pgCtl: directory + "/pg_ctl", postgres: directory + "/postgres", psql: psql, pgBasebackup: pgBasebackup
        )
    }

    /// `/usr/lib/postgresql/N/bin` for the highest N (14 or later) that has initdb, pg_ctl and postgres.
    static func newestDebianBinDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init)
            .filter { $0 >= oldestSupportedMajorVersion }
            .sorted(by: >)
        return versions.lazy.map { "\(root)/\($0)/bin" }.first { directory in
            ["initdb", "pg_ctl", "postgres"].allSatisfy { FileManager.default.isExecutableFile(atPath: "\(directory)/\($0)") }
        }
    }

    /// `directory/name` when it is there, else `name` found on the PATH.
    static func inOrOnPath(_ name: String, directory: String) -> String? {
        FileManager.default.isExecutableFile(atPath: directory + "/" + name) ? directory + "/" + name : onPath(name)
    }

    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").lazy.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static func withServerUser(initdb: String, pgCtl: String, postgres: String, psql: String, pgBasebackup: String)
        -> Result<PostgresInstallation, PostgresServerError>
    {
        guard geteuid() == 0 else {
            return .success(
                PostgresInstallation(initdb: initdb, pgCtl: pgCtl, postgres: postgres, psql: psql, pgBasebackup: pgBasebackup, serverUser: nil)
            )
        }
        guard let entry = getpwnam("postgres") else {
            return .failure(
                .unavailable(
                    reason: "running as root, and PostgreSQL refuses root, but there is no `postgres` user to run it as (Debian's postgresql package creates it)"
                )
            )
        }
        let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        let prefix: [String]
        if let setpriv = onPath("setpriv") ?? ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile) {
            prefix = [setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--"]
        } else if let runuser = onPath("runuser") ?? ["/usr/sbin/runuser", "/sbin/runuser"].first(where: FileManager.default.isExecutableFile) {
            prefix = [runuser, "-u", "postgres", "--"]
        } else {
            return .failure(.unavailable(reason: "running as root, and neither setpriv nor runuser (util-linux) is here to run PostgreSQL as `postgres`"))
        }
        return .success(
            PostgresInstallation(
                initdb: initdb, pgCtl: pgCtl, postgres: postgres, psql: psql, pgBasebackup: pgBasebackup,
                serverUser: ServerUser(name: "postgres", uid: uid, gid: gid, prefix: prefix)
            )
        )
    }
}
