import CEpoll
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The accepting loop (loop 0) takes connections from the listening sockets and hands each to a loop
/// (`distribute`), which adopts it; out of descriptors or memory, accepting pauses for a moment.
extension ServingLoop {
    /// Starts watching a listening socket (loop 0 accepts for every loop).
    func listen(on listener: ListeningSocket) {
        do {
            try epoll.add(listener.descriptor, .readable)
            listeners[listener.descriptor] = listener
        } catch {
            logger.error("cannot watch a listening socket", metadata: ["error": "\(error)"])
        }
    }

    /// Takes over an accepted connection's socket.
    func adopt(_ descriptor: Int32, kind: ConnectionKind) {
        guard phase.isServing else {
            close(descriptor)
            context.onClose(kind)  // counted when it was admitted
            return
        }
        var tls: TLSSession?
        if kind == .tcp, let server = context.tls {
            do {
                tls = try TLSSession(context: server.context)
            } catch {
                logger.warning("cannot start TLS for a connection", metadata: ["error": "\(error)"])
                close(descriptor)
                context.onClose(kind)
                return
            }
        }
        let connection = ServedConnection(descriptor: descriptor, kind: kind, loop: self, tls: tls)
        do {
            try epoll.add(descriptor, .readable)
        } catch {
            logger.debug("cannot watch an accepted connection", metadata: ["error": "\(error)"])
            tls?.discard()
            close(descriptor)
            context.onClose(kind)
            return
        }
        let slot = Int(descriptor)
        if slot >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: max(slot + 1 - connections.count, 64)))
        }
        connections[slot] = connection
    }

    func accept(from listener: ListeningSocket) {
        // Up to a batch per turn, so a connection storm cannot starve the connections already served.
        for _ in 0..<64 {
            let descriptor = cepoll_accept(listener.descriptor)
            if descriptor >= 0 {
                if listener.kind == .tcp {
                    var on: Int32 = 1
                    _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                }
                distribute(descriptor, listener.kind)
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                return
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors or memory: the pending connection stays queued. Stop watching the
                // listeners for a moment rather than spin on them; they resume on their own.
                logger.warning(
                    "cannot accept connections: \(String(cString: strerror(errno))); pausing accepts for 100 ms"
                )
                pauseListeners()
                return
            default:
                logger.warning("accept failed", metadata: ["error": "\(String(cString: strerror(errno)))"])
                return
            }
        }
    }

    private func pauseListeners() {
        for descriptor in listeners.keys { epoll.remove(descriptor) }
        deadlines.add(.resumeListeners, at: monotonicMilliseconds() + 100)
    }
}
