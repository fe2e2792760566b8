import EntitledTestSupport
import Foundation

/// The TCP connections another process holds, read from Linux's `/proc`: which of its descriptors are
/// sockets (`/proc/PID/fd`), and where each goes and in what state (`/proc/net/tcp` and `tcp6`, keyed
/// by the socket's inode). Lets a test see that a connection really was closed, rather than assume it
/// after a while.
enum ProcessSockets {
    /// The inodes of the established TCP connections `pid` holds to `port` (on any address).
    static func establishedConnections(ofProcess pid: Int32, toPort port: Int) -> Set<UInt64> {
        let held = socketInodes(ofProcess: pid)
        var established = Set<UInt64>()
        for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for row in ProcFile.text(path).split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                let fields = row.split(separator: " ")
                guard fields.count > 9, let inode = UInt64(fields[9]), held.contains(inode) else { continue }
                guard let remotePort = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }) else { continue }
                // 01 is TCP_ESTABLISHED.
                if remotePort == port && fields[3] == "01" { established.insert(inode) }
            }
        }
        return established
    }

    /// Waits until `condition` holds, looking every 50 ms; fails the test after `timeout` with `what`.
    static func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestSupportFailure(description: "never happened: \(what)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The inodes of the sockets among `pid`'s open descriptors (links reading `socket:[INODE]`).
    private static func socketInodes(ofProcess pid: Int32) -> Set<UInt64> {
        let directory = "/proc/\(pid)/fd"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var inodes = Set<UInt64>()
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(descriptor)"),
                target.hasPrefix("socket:["), target.hasSuffix("]")
            else { continue }
            if let inode = UInt64(target.dropFirst("socket:[".count).dropLast()) { inodes.insert(inode) }
        }
        return inodes
    }
}
