/// Where an `entitled` server listens: a TCP host and port, or a Unix domain socket.
public enum ServerAddress: Sendable, Hashable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unixSocket(path: String)

    /// The server's default address.
    public static let standard = ServerAddress.tcp(host: "127.0.0.1", port: 7117)

    /// `127.0.0.1:7117`, `[::1]:7117` or `unix:/run/entitled.sock`: the way error messages and the
    /// console's prompt name it.
    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unixSocket(let path): "unix:\(path)"
        }
    }
}
