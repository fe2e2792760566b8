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
    /// How long, in microseconds, an event loop that ran out of work keeps asking for more before it
    /// sleeps; 0 sleeps at once. A request that arrives meanwhile is served without waking a sleeping
    /// thread, which is most of a lone client's round trip on a virtual machine (measured here: 65 µs
    /// against 26 µs at one connection). The price is CPU: up to this long each time a loop runs out of
    /// work, so a loop with a steady trickle of requests stays busy; an idle server spins once and sleeps.
    public var busyPollMicroseconds: Int

    public static let defaultPort = 7117
    public static let defaultMaximumLineLength = 64 * 1024
    /// The largest line limit accepted: a buffered line is held in memory whole.
    public static let largestMaximumLineLength = 64 * 1024 * 1024
    /// The default number of event loops: half the cores (at least one). A check costs less than the
    /// system calls that carry it, so the clients on the same machine and the kernel's network work
    /// need the other cores: on a 2-core machine one loop answers more checks than two.
    public static let defaultEventLoops = max(1, ProcessorCount.online / 2)
    public static let largestEventLoopCount = 256
    /// Off by default: spinning trades CPU that other processes on the host may need for latency, which
    /// is a choice for whoever deploys it.
    public static let defaultBusyPollMicroseconds = 0
    /// The longest busy poll accepted (10 ms): beyond that a loop would rather sleep.
    public static let largestBusyPollMicroseconds = 10_000

    public init(
        tcp: TCPAddress? = TCPAddress(host: "127.0.0.1", port: ServerConfiguration.defaultPort),
        unixSocketPath: String? = nil,
        maximumLineLength: Int = ServerConfiguration.defaultMaximumLineLength,
        eventLoops: Int = ServerConfiguration.defaultEventLoops,
        busyPollMicroseconds: Int = ServerConfiguration.defaultBusyPollMicroseconds
    ) {
        self.eventLoops = eventLoops
        self.busyPollMicroseconds = busyPollMicroseconds
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
