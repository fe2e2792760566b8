import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's limit on open files, which bounds its connections.
enum DescriptorLimit {
    /// Descriptors the server needs besides its connections: listeners, epoll and eventfds, the log,
    /// snapshots being written, standard streams.
    static let reserved = 64

    /// Raises the soft limit towards what `connections` need, as far as the hard limit allows (a
    /// shell's default soft limit is often 1024), and warns when that is not enough: connections beyond
    /// it would fail to be accepted rather than be answered `busy`.
    static func raise(toServe connections: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(connections + reserved)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = min(wanted, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        if limit.rlim_cur < wanted {
            logger.warning(
                "the open file limit is lower than --max-connections needs; raise it (ulimit -n, LimitNOFILE=) or lower --max-connections",
                metadata: ["limit": "\(limit.rlim_cur)", "needed": "\(wanted)"]
            )
        }
    }
}
