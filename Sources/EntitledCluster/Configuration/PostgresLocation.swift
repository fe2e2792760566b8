import NIOSSL
import PostgresNIO

/// Where the system of record is: parsed from a `postgres://` URL, which is the only place that holds the
/// password. Its `description` never shows the password, so it is what logs, `stats` and errors print.
///
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE&schema=NAME&host=/SOCKET/DIR`
/// (`postgresql://` too). Defaults: port 5432, database = user, schema `entitled`, sslmode `prefer`.
public struct PostgresLocation: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// A directory holding the server's Unix socket (`?host=/run/postgresql`), used instead of TCP.
    public var socketDirectory: String?
    public var user: String
    public var password: String?
    public var database: String
    /// The schema holding entitled's tables: one the role owns, or may create.
    public var schema: String
    public var tls: TLSMode

    /// libpq's `sslmode` values this server supports.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS if the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// TLS or nothing, without checking the certificate (as libpq's `require`).
        case require
        /// TLS, the certificate checked against the system's roots and the host name.
        case verifyFull = "verify-full"
    }

    public init(url: String) throws(ClusterError) {
        func bad(_ problem: String) -> ClusterError {
            .badURL("--postgres: \(problem) (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        var rest: Substring
        if url.hasPrefix("postgres://") {
            rest = url.dropFirst("postgres://".count)
        } else if url.hasPrefix("postgresql://") {
            rest = url.dropFirst("postgresql://".count)
        } else {
            throw bad("the URL must start with postgres:// or postgresql://")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var userInfo: Substring = ""
        if let at = rest.lastIndex(of: "@") {
            userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }
        guard !userInfo.isEmpty else { throw bad("no user name") }
        if let colon = userInfo.firstIndex(of: ":") {
            user = try Self.decode(userInfo[..<colon], what: "user name")
            password = try Self.decode(userInfo[userInfo.index(after: colon)...], what: "password")
        } else {
            user = try Self.decode(userInfo, what: "user name")
            password = nil
        }
        guard !user.isEmpty else { throw bad("no user name") }
        // The host, with an optional port; `[::1]:5432` for IPv6.
        var hostPart = rest
        var portPart: Substring?
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { throw bad("an IPv6 address without its closing ]") }
            let after = hostPart[hostPart.index(after: close)...]
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
            if after.hasPrefix(":") { portPart = after.dropFirst() } else if !after.isEmpty { throw bad("unexpected \"\(after)\" after the host") }
        } else if let colon = hostPart.lastIndex(of: ":") {
            portPart = hostPart[hostPart.index(after: colon)...]
            hostPart = hostPart[..<colon]
        }
        host = hostPart.isEmpty ? "127.0.0.1" : String(hostPart)
        if let portPart {
            guard let number = Int(portPart), (1...65535).contains(number) else { throw bad("the port \"\(portPart)\" is not a number from 1 to 65535") }
            port = number
        } else {
            port = 5432
        }
        let databaseName = try Self.decode(path, what: "database name")
        database = databaseName.isEmpty ? user : databaseName
        schema = "entitled"
        tls = .prefer
        socketDirectory = nil
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1)
            let key = String(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1], what: key) : ""
            switch key {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw bad("sslmode \"\(value)\" is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "schema":
                guard Self.isPlainIdentifier(value) else {
                    throw bad("schema \"\(value)\" must be a plain lower-case name (letters, digits, _; not starting with a digit; at most 63)")
                }
                schema = value
            case "host":
                guard value.hasPrefix("/") else { throw bad("host= in the query names a socket directory, an absolute path") }
                socketDirectory = value
            case "connect_timeout", "application_name":
                continue
            default:
                throw bad("unknown parameter \"\(key)\" (known: sslmode, schema, host, connect_timeout, application_name)")
            }
        }
    }

    /// The URL without its password.
    public var description: String {
        if let socketDirectory {
            return "postgres://\(user)@localhost:\(port)/\(database)?host=\(socketDirectory)&schema=\(schema)"
        }
        let address = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)@\(address):\(port)/\(database)?schema=\(schema)"
    }

    /// The connection settings PostgresNIO takes.
    func connectionConfiguration(connectTimeout: Duration) throws(ClusterError) -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketDirectory {
            configuration = .init(
                unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database
            )
        } else {
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: try tlsSetting())
        }
        let milliseconds = connectTimeout.components.seconds * 1000 + connectTimeout.components.attoseconds / 1_000_000_000_000_000
        configuration.options.connectTimeout = .milliseconds(milliseconds)
        // Every statement of a node is a short lookup or insert. The planner's estimates for the small
        // `head` table before it is first analysed made PostgreSQL compile the catch-up query with its
        // JIT: 75 ms a statement (EXPLAIN ANALYZE), where it runs in 0.2 ms.
        configuration.options.additionalStartupParameters = [("jit", "off")]
        return configuration
    }

    private func tlsSetting() throws(ClusterError) -> PostgresConnection.Configuration.TLS {
        do {
            switch tls {
            case .disable:
                return .disable
            case .prefer, .require:
                var settings = TLSConfiguration.makeClientConfiguration()
                settings.certificateVerification = .none
                let context = try NIOSSLContext(configuration: settings)
                return tls == .prefer ? .prefer(context) : .require(context)
            case .verifyFull:
                return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw .badURL("--postgres: TLS could not be set up: \(error)")
        }
    }

    /// A name safe to write into SQL unquoted.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }

    /// Percent-decoding, as URLs write `@`, `:` or `/` in a password.
    private static func decode(_ text: Substring, what: String) throws(ClusterError) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first != utf8.endIndex, utf8.index(after: first) != utf8.endIndex,
                    let high = hexValue(utf8[first]), let low = hexValue(utf8[utf8.index(after: first)])
                else { throw .badURL("--postgres: the \(what) holds a % that is not followed by two hex digits") }
                bytes.append(high << 4 | low)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
