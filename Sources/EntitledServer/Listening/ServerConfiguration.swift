/// Where and how the server listens. The defaults are the embedded defaults of `entitled`.
public struct ServerConfiguration: Sendable {
    /// The TCP address to bind, or `nil` to serve on the Unix socket only.
    public var tcp: TCPAddress?
    /// The path of a Unix domain socket to serve on as well (or alone), if any.
    public var unixSocketPath: String?
    /// The longest request line accepted, in bytes without its `\n`. A longer line is answered
    /// `too_large` and its connection closed.
    public var maximumLineLength: Int

    public static let defaultPort = 7117
    public static let defaultMaximumLineLength = 64 * 1024
    /// The largest line limit accepted: a buffered line is held in memory whole.
    public static let largestMaximumLineLength = 64 * 1024 * 1024

    public init(
        tcp: TCPAddress? = TCPAddress(host: "127.0.0.1", port: ServerConfiguration.defaultPort),
        unixSocketPath: String? = nil,
        maximumLineLength: Int = ServerConfiguration.defaultMaximumLineLength
    ) {
        self.tcp = tcp
        self.unixSocketPath = unixSocketPath
        self.maximumLineLength = maximumLineLength
    }

    /// A TCP host and port; port 0 asks the system for any free port.
    public struct TCPAddress: Sendable, Hashable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }
}
