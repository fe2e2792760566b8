import Foundation

/// What a pipelined load did.
struct LoadResult: Sendable {
    var answered = 0
    var errors = 0
    var firstError: String?
    var seconds = 0.0
}

/// Loads grants fast: each connection has a writer thread that keeps up to `window` request lines in
/// flight and a reader thread that takes the answers. Separate threads, because a writer that also had to
/// read could deadlock with the server, which stops reading a connection whose answers pile up unread.
enum PipelinedLoader {
    /// Grants `product` to users `<prefix><i>` for every `i` in `users`, spread over `connections`.
    static func grant(
        port: UInt16, users: Range<Int>, prefix: String, product: String = "p",
        connections: Int = 4, window: Int = 1000, timeLimitSeconds: Double = 600
    ) throws -> LoadResult {
        let links = try (0..<connections).map { _ in try TCPConnection(port: port) }
        let states = links.map { _ in InFlightWindow(capacity: window) }
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: timeLimitSeconds)
        let started = monotonicNanoseconds()
        // Contiguous slices of the user range, one per connection.
        let slices = (0..<connections).map { index -> Range<Int> in
            let lower = users.lowerBound + users.count * index / connections
            let upper = users.lowerBound + users.count * (index + 1) / connections
            return lower..<upper
        }
        let head = Array("{\"op\":\"grant\",\"user\":\"\(prefix)".utf8)
        let tail = Array("\",\"product\":\"\(product)\"}\n".utf8)
        let results = try onThreads(2 * connections, name: "loader") { thread -> LoadResult in
            let index = thread / 2
            let link = links[index]
            let state = states[index]
            do {
                if thread % 2 == 0 {
                    try write(slices[index], head: head, tail: tail, to: link, window: state, deadline: deadline)
                    return LoadResult()
                }
                return try read(slices[index].count, from: link, window: state)
            } catch {
                // Wake the other half of this connection, whichever it is.
                state.fail()
                link.shutdownBoth()
                throw error
            }
        }
        var total = LoadResult()
        for result in results {
            total.answered += result.answered
            total.errors += result.errors
            total.firstError = total.firstError ?? result.firstError
        }
        total.seconds = Double(monotonicNanoseconds() - started) / 1e9
        return total
    }

    /// Writes the requests in chunks of lines, each only when the window has room for it.
    private static func write(
        _ users: Range<Int>, head: [UInt8], tail: [UInt8], to link: TCPConnection, window: InFlightWindow, deadline: UInt64
    ) throws {
        let chunkLines = 100
        var chunk: [UInt8] = []
        chunk.reserveCapacity(chunkLines * (head.count + tail.count + 20))
        var next = users.lowerBound
        while next < users.upperBound {
            let end = min(next + chunkLines, users.upperBound)
            chunk.removeAll(keepingCapacity: true)
            for user in next..<end {
                chunk.append(contentsOf: head)
                chunk.appendDecimal(user)
                chunk.append(contentsOf: tail)
            }
            try window.reserve(end - next, deadline: deadline)
            try link.writeAll(chunk)
            next = end
        }
    }

    /// Reads `count` answers, releasing window room as they come.
    private static func read(_ count: Int, from link: TCPConnection, window: InFlightWindow) throws -> LoadResult {
        let reader = LineReader(link)
        var result = LoadResult()
        var unreleased = 0
        while result.answered < count {
            let line = try reader.readLine()
            result.answered += 1
            if !line.starts(with: "{\"ok\":true") {
                result.errors += 1
                if result.firstError == nil { result.firstError = String(decoding: line.prefix(300), as: UTF8.self) }
            }
            unreleased += 1
            // Releasing under the lock once per 50 answers keeps the lock off the per-line path.
            if unreleased == 50 || result.answered == count {
                window.release(unreleased)
                unreleased = 0
            }
        }
        return result
    }
}
