#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A server's listening sockets, bound: by `EntitledServer.start`, or earlier by the `LoadingListener`
/// that answers while the store loads, which hands them on through `ServerConfiguration.boundListeners`.
public struct BoundListeners: Sendable {
    let sockets: [ListeningSocket]
    /// The Unix socket's file, to remove at the stop only if it is still the one bound here.
    let socketFile: FileIdentity?
    /// Where the Unix socket's file is, if one was bound.
    let socketPath: String?

    /// Binds the TCP address and the Unix socket `configuration` names.
    static func bind(_ configuration: ServerConfiguration) throws(ServerError) -> BoundListeners {
        var sockets: [ListeningSocket] = []
        var socketFile: FileIdentity?
        do throws(ServerError) {
            if let tcp = configuration.tcp {
                do {
                    sockets.append(try .tcp(host: tcp.host, port: tcp.port, backlog: 1024))
                } catch {
                    throw ServerError.bindFailed(address: "\(tcp.host):\(tcp.port)", reason: "\(error)")
                }
            }
            if let path = configuration.unixSocketPath {
                sockets.append(try bindUnix(path, mode: mode_t(configuration.unixSocketMode)))
                socketFile = FileIdentity(path: path)
            }
        } catch {
            for socket in sockets { socket.close() }
            throw error
        }
        return BoundListeners(sockets: sockets, socketFile: socketFile, socketPath: configuration.unixSocketPath)
    }

    /// Closes the sockets and removes the Unix socket's file if it is still the one bound here: a start
    /// that fails after binding (the store could not be loaded) leaves nothing behind.
    public func release() {
        for socket in sockets { socket.close() }
        if let socketFile, let socketPath, FileIdentity(path: socketPath) == socketFile { unlink(socketPath) }
    }

    private static func bindUnix(_ path: String, mode: mode_t) throws(ServerError) -> ListeningSocket {
        // A socket file left by a server that died is removed; one that a live server answers on is not.
        if ListeningSocket.isAccepting(unixSocketPath: path) {
            throw ServerError.socketInUse(path: path)
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            // Only a socket file is replaced: anything else at the path is someone's, and binding over it
            // would fail with an "address in use" that names nothing the operator can fix.
            guard (status.st_mode & S_IFMT) == S_IFSOCK else {
                throw ServerError.notASocket(path: path, kind: describeFileKind(status.st_mode))
            }
            unlink(path)
        }
        do {
            return try ListeningSocket.unix(path: path, mode: mode, backlog: 1024)
        } catch {
            throw ServerError.bindFailed(address: path, reason: "\(error)")
        }
    }

    /// What a file that is not a socket is, for `ServerError.notASocket`.
    private static func describeFileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a named pipe"
        case S_IFCHR, S_IFBLK: "a device"
        default: "a file"
        }
    }
}
