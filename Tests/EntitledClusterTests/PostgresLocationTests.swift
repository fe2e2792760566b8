import EntitledCluster
import Testing

/// `--postgres` URLs: what is understood, what is refused with a reason, and that the password never
/// shows in the description that logs, `stats` and errors print.
@Suite("PostgreSQL URLs")
struct PostgresLocationTests {
    @Test func aFullURLIsReadAndItsDescriptionHidesThePassword() throws {
        let location = try PostgresLocation(url: "postgres://app:s%40cr%3At@db.internal:6543/entitlements?sslmode=require&schema=ent_prod")
        #expect(location.user == "app")
        #expect(location.password == "s@cr:t")
        #expect(location.host == "db.internal")
        #expect(location.port == 6543)
        #expect(location.database == "entitlements")
        #expect(location.schema == "ent_prod")
        #expect(location.tls == .require)
        #expect(location.description == "postgres://app@db.internal:6543/entitlements?schema=ent_prod")
        #expect(!location.description.contains("s@cr"))
    }

    @Test func defaultsAreThoseOfLibpq() throws {
        let location = try PostgresLocation(url: "postgresql://app@localhost")
        #expect(location.port == 5432)
        #expect(location.database == "app")
        #expect(location.schema == "entitled")
        #expect(location.tls == .prefer)
        #expect(location.password == nil)
    }

    @Test func aSocketDirectoryIsTakenFromTheQuery() throws {
        let location = try PostgresLocation(url: "postgres://app:pw@/db?host=/run/postgresql")
        #expect(location.socketDirectory == "/run/postgresql")
        #expect(!location.description.contains("pw"))
    }

    @Test(arguments: [
        ("mysql://app@db/x", "postgres://"),
        ("postgres://db:5432/x", "no user name"),
        ("postgres://app@db:99999/x", "port"),
        ("postgres://app@db/x?sslmode=sometimes", "sslmode"),
        ("postgres://app@db/x?schema=Robert%27);DROP", "schema"),
        ("postgres://app@db/x?colour=blue", "unknown parameter \"colour\""),
        ("postgres://app:100%zz@db/x", "password"),
    ])
    func badURLsAreRefusedWithTheReason(url: String, expected: String) {
        #expect {
            try PostgresLocation(url: url)
        } throws: { error in
            guard let error = error as? ClusterError, case .badURL(let message) = error else { return false }
            return message.contains(expected) && !message.contains("zz@")
        }
    }
}
