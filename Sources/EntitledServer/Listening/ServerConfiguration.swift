#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where and how the server listens. The defaults are the embedded defaults of `entitled`.
public struct ServerConfiguration: Sendable {
    /// The TCP address to bind, or `nil` to serve on the Unix socket only.
    public var tcp: TCPAddress?
    /// The path of a Unix domain socket to serve on as well (or alone), if any.
    public var unixSocketPath: String?
    /// The longest request line accepted, in bytes without its `\n`. A longer line is answered
    /// `too_large` and its connection closed.
    public var maximumLineLength: Int
    /// How many event loop threads serve connections.
    public var eventLoops: Int

    public static let defaultPort = 7117
    public static let defaultMaximumLineLength = 64 * 1024
    /// The largest line limit accepted: a buffered line is held in memory whole.
    public static let largestMaximumLineLength = 64 * 1024 * 1024
    /// The default number of event loops: half the cores (at least one). A check costs less than the
    /// system calls that carry it, so the clients on the same machine and the kernel's network work
    /// need the other cores: on a 2-core machine one loop answers more checks than two.
    public static let defaultEventLoops = max(1, ProcessorCount.online / 2)
    public static let largestEventLoopCount = 256

    public init(
        tcp: TCPAddress? = TCPAddress(host: "127.0.0.1", port: ServerConfiguration.defaultPort),
        unixSocketPath: String? = nil,
        maximumLineLength: Int = ServerConfiguration.defaultMaximumLineLength,
        eventLoops: Int = ServerConfiguration.defaultEventLoops
    ) {
        self.eventLoops = eventLoops
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

/// The number of processors online.
enum ProcessorCount {
    static var online: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
