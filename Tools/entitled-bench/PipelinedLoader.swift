import Foundation

/// Sends one request per user as fast as the server takes them, and checks every answer: what fills a
/// server before it is measured. Each connection has a writer thread that keeps up to `window` requests in
/// flight and a reader thread that takes the answers: a writer that also read could deadlock with the
/// server, which stops reading a connection whose answers pile up unread.
enum PipelinedLoader {
    struct Result: Sendable {
        var answered = 0, errors = 0
        var firstError: String?
        var seconds = 0.0
    }

    /// Writes the request for one user; each connection's writer makes its own (it may keep state).
    typealias RequestWriter = (_ user: Int, _ bytes: inout [UInt8]) -> Void

    /// Grants to users 0..<users, named as twelve digits as the check loads ask for them: entitled `prod_pro`
    /// (entitlement `pro` defined first), Redis `SADD ents:<user> pro`. Returns the seconds it took; any
    /// answer but a success fails it.
    static func grants(to server: Server, users: Int) throws -> Double {
        if server.target == .entitled { try server.definePro() }
        let requests = LoadRequests(target: server.target)
        let loaded = try load(port: server.port, users: 0..<users, connections: 8, window: 256) { _ in
            { user, bytes in requests.append(.grant, user: user, to: &bytes) }
        } accepts: { requests.grantSucceeded($0) }
        guard loaded.errors == 0 else {
            throw BenchError("loading \(server.target.rawValue) failed: \(loaded.errors) errors, the first: \(loaded.firstError ?? "?")")
        }
        return loaded.seconds
    }

    /// Sends the request `writer` makes for each of `users`, in contiguous slices over `connections`; an
    /// answer is an error unless `accepts` takes it.
    static func load(
        port: UInt16, users: Range<Int>, connections: Int, window: Int, writer: @escaping @Sendable (_ connection: Int) -> RequestWriter,
        accepts: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool
    ) throws -> Result {
        let count = max(1, min(connections, users.count))
        let links = try (0..<count).map { _ in try TCPConnection(port: port) }
        let windows = links.map { _ in InFlightWindow(capacity: window) }
        let slices = (0..<count).map { (users.lowerBound + users.count * $0 / count)..<(users.lowerBound + users.count * ($0 + 1) / count) }
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: 3600)
        // Several lines per write, at most a quarter of the window, so that the window refills while answers come.
        let chunkLines = max(1, min(window / 4, 256))
        let started = monotonicNanoseconds()
        let results = try onThreads(2 * count, name: "loader") { thread -> Result in
            let (index, link, window) = (thread / 2, links[thread / 2], windows[thread / 2])
            do {
                guard thread % 2 == 1 else {
                    try write(slices[index], with: writer(index), chunkLines: chunkLines, to: link, window: window, deadline: deadline)
                    return Result()
                }
                return try read(slices[index].count, from: link, window: window, accepts: accepts)
            } catch {
                // Wake the other half of this connection, which then fails with the same cause.
                let cause = window.fail(error)
                link.shutdownBoth()
                throw cause
            }
        }
        return results.reduce(into: Result(seconds: Double(monotonicNanoseconds() - started) / 1e9)) { total, result in
            (total.answered, total.errors) = (total.answered + result.answered, total.errors + result.errors)
            total.firstError = total.firstError ?? result.firstError
        }
    }

    /// Writes the requests in chunks of lines, each only when the window has room for it.
    private static func write(_ users: Range<Int>, with writer: RequestWriter, chunkLines: Int, to link: TCPConnection, window: InFlightWindow, deadline: UInt64) throws {
        var chunk: [UInt8] = []
        for first in stride(from: users.lowerBound, to: users.upperBound, by: chunkLines) {
            let end = min(first + chunkLines, users.upperBound)
            chunk.removeAll(keepingCapacity: true)
            for user in first..<end { writer(user, &chunk) }
            try window.reserve(end - first, deadline: deadline)
            try link.writeAll(chunk)
        }
    }

    /// Reads `count` answers, releasing window room as they come (under the lock once per 32 answers).
    private static func read(_ count: Int, from link: TCPConnection, window: InFlightWindow, accepts: (UnsafeRawBufferPointer) -> Bool) throws -> Result {
        let reader = LineReader(link)
        var result = Result()
        while result.answered < count {
            let line = try reader.readLine()
            result.answered += 1
            if !accepts(line) {
                result.errors += 1
                result.firstError = result.firstError ?? String(decoding: line.prefix(300), as: UTF8.self)
            }
            let unreleased = result.answered % 32 == 0 ? 32 : result.answered == count ? result.answered % 32 : 0
            if unreleased > 0 { window.release(unreleased) }
        }
        return result
    }
}

/// The count of requests in flight on one connection, shared by its writer and its reader.
private final class InFlightWindow: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private var inFlight = 0
    /// What failed first on this connection, once something did.
    private var cause: (any Error)?

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Waits until `lines` more fit (or nothing is in flight), then counts them as in flight.
    func reserve(_ lines: Int, deadline: UInt64) throws {
        try condition.withLock {
            while inFlight + lines > capacity && inFlight > 0 && cause == nil {
                guard monotonicNanoseconds() < deadline else { throw BenchError("the load did not finish within its time limit: the server stalled") }
                _ = condition.wait(until: Date().addingTimeInterval(0.5))
            }
            if cause != nil { throw BenchError("the other half of this connection failed") }
            inFlight += lines
        }
    }

    func release(_ lines: Int) {
        condition.withLock {
            inFlight -= lines
            condition.signal()
        }
    }

    /// Records `error` unless something failed before, wakes the writer, and returns the first cause.
    func fail(_ error: any Error) -> any Error {
        condition.withLock {
            cause = cause ?? error
            condition.broadcast()
            return cause ?? error
        }
    }
}
