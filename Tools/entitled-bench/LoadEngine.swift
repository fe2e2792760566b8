import CEpoll
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// What a measured load is.
struct LoadShape: Sendable, Codable {
    var connections: Int
    /// Requests sent together per connection; the next batch goes when all of them are answered (what
    /// `redis-benchmark -P` does). 1 is a closed loop with one request in flight.
    var pipeline: Int
    var users: Int
    var distribution: KeyDistribution
    var mix: OperationMix
}

/// What a measured load saw.
struct LoadOutcome: Sendable {
    /// Latency of every request answered in the window, in nanoseconds: from its batch's send to its answer.
    var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    /// The same, for the checks alone (the C generator's runs; empty otherwise).
    var checkHistogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    var answered = 0
    var errors = 0
    var inactive = 0
    var firstError: String?
    var windowSeconds = 0.0
    /// CPU time the server used over the measured window (user and system, all threads), when read.
    var serverCPUSeconds: Double?
    /// CPU time the load generator used over the window, when it ran as a process of its own.
    var generatorCPUSeconds: Double?

    var requestsPerSecond: Double { windowSeconds > 0 ? Double(answered) / windowSeconds : 0 }

    mutating func merge(_ other: LoadOutcome) {
        histogram.add(other.histogram)
        checkHistogram.add(other.checkHistogram)
        answered += other.answered
        errors += other.errors
        inactive += other.inactive
        firstError = firstError ?? other.firstError
    }
}

/// The load generator: each thread drives many connections through one epoll set, as `redis-benchmark`
/// drives its connections from one event loop (ae, on epoll): a thread per connection would spend the 2
/// cores on context switches and measure itself. epoll rather than `poll`: `poll` registers and
/// unregisters every descriptor on every call, and with one connection, where each round trip is a wait,
/// the generator drove Redis about 9% slower than `redis-benchmark`. Requests and answers are written and
/// scanned in per-connection buffers; a request costs no allocation.
enum LoadEngine {
    /// Runs `shape` against the server on `port` for `warmup` + `duration` seconds on `threads` threads,
    /// each polling for up to `spinMicroseconds` before it sleeps (`PollDriver.spinNanoseconds`).
    static func measure(
        port: UInt16, target: Target, shape: LoadShape, threads: Int, spinMicroseconds: Int = 0, warmup: Double,
        duration: Double, seed: UInt64
    ) throws -> LoadOutcome {
        let connections = try (0..<shape.connections).map { _ in try TCPConnection(port: port) }
        let start = monotonicNanoseconds()
        let measureFrom = start + nanoseconds(seconds: warmup)
        let deadline = measureFrom + nanoseconds(seconds: duration)
        let threadCount = max(1, min(threads, shape.connections))
        let outcomes = try onThreads(threadCount, name: "load") { thread -> LoadOutcome in
            let mine = stride(from: thread, to: connections.count, by: threadCount).map { connections[$0] }
            var driver = PollDriver(
                connections: mine, requests: LoadRequests(target: target), pipeline: shape.pipeline,
                source: .random(KeyChooser(users: shape.users, distribution: shape.distribution, seed: seed &+ UInt64(thread)), grantPercent: shape.mix.grantPercent),
                measureFrom: measureFrom, deadline: deadline, spinNanoseconds: UInt64(spinMicroseconds) * 1000
            )
            return try driver.run()
        }
        var merged = LoadOutcome()
        for outcome in outcomes { merged.merge(outcome) }
        merged.windowSeconds = duration
        return merged
    }

    /// Grants to new users on `connections` connections, one request in flight on each (a closed loop),
    /// for `warmup` + `duration` seconds on one thread: the durable-write load. One generator thread,
    /// as `redis-benchmark` has; a thread per connection spent about a third of the 2 cores on wake-ups
    /// and context switches of its own, and the server threads it preempted measured slower.
    static func measureNewUsers(port: UInt16, target: Target, connections count: Int, warmup: Double, duration: Double) throws -> LoadOutcome {
        let connections = try (0..<count).map { _ in try TCPConnection(port: port, timeoutSeconds: 30) }
        let measureFrom = monotonicNanoseconds() + nanoseconds(seconds: warmup)
        let deadline = measureFrom + nanoseconds(seconds: duration)
        var driver = PollDriver(
            connections: connections, requests: LoadRequests(target: target), pipeline: 1,
            source: .sequential(next: 0, end: .max), measureFrom: measureFrom, deadline: deadline
        )
        var outcome = try driver.run()
        outcome.windowSeconds = duration
        return outcome
    }

    /// Gives users 0..<users their membership (entitled: a grant of `prod_pro`; Redis: `SADD ents:<user>
    /// pro`), pipelined over a few connections. Returns what it saw; every answer should be a success.
    static func load(port: UInt16, target: Target, users: Int, connections count: Int = 8, pipeline: Int = 256) throws -> LoadOutcome {
        let connections = try (0..<count).map { _ in try TCPConnection(port: port) }
        let far = monotonicNanoseconds() + nanoseconds(seconds: 3600)
        var driver = PollDriver(
            connections: connections, requests: LoadRequests(target: target), pipeline: pipeline,
            source: .sequential(next: 0, end: users), measureFrom: 0, deadline: far
        )
        return try driver.run()
    }
}

/// Where the users of the requests come from.
enum KeySource {
    /// Drawn from a distribution, with `grantPercent` of the requests grants.
    case random(KeyChooser, grantPercent: Int)
    /// Every user below `end` once, in order, all of them grants, until the deadline: loading, and (with
    /// no end) durable writes, where every request is a new record.
    case sequential(next: Int, end: Int)
}

/// One thread's connections and their epoll set.
struct PollDriver {
    /// The state of one connection.
    final class Link {
        let connection: TCPConnection
        var outgoing: [UInt8] = []
        var written = 0
        var incoming: [UInt8] = []
        var kinds: [RequestKind] = []
        var answeredInBatch = 0
        var batchStartedAt: UInt64 = 0
        var finished = false

        init(_ connection: TCPConnection) {
            self.connection = connection
            outgoing.reserveCapacity(8192)
            incoming.reserveCapacity(1 << 16)
        }
    }

    private let links: [Link]
    private let requests: LoadRequests
    private let pipeline: Int
    private var source: KeySource
    private let measureFrom: UInt64
    private let deadline: UInt64
    /// The links' sockets, level-triggered; each event carries its link's index.
    private let epoll: Int32
    /// Whether the epoll set also asks for writability of a link: while it has bytes the socket refused.
    private var wantsWritable: [Bool]
    private var events: [epoll_event]
    private var outcome = LoadOutcome()
    private var unfinished: Int
    /// How long the driver keeps polling, once nothing is ready, before it sleeps in `epoll_wait` (0: it
    /// sleeps at once). A sleeping generator is woken by the answer, and on this 2-core virtual machine
    /// that wake-up is most of a lone connection's round trip: `redis-benchmark -c 1`, which sleeps, took
    /// 63 µs a round trip where a polling client took 28. Polling takes the waker's cost out of what is
    /// measured, for both servers alike, as a busy client's thread would.
    private let spinNanoseconds: UInt64

    init(
        connections: [TCPConnection], requests: LoadRequests, pipeline: Int, source: KeySource, measureFrom: UInt64,
        deadline: UInt64, spinNanoseconds: UInt64 = 0
    ) {
        self.spinNanoseconds = spinNanoseconds
        links = connections.map(Link.init)
        self.requests = requests
        self.pipeline = max(1, pipeline)
        self.source = source
        self.measureFrom = measureFrom
        self.deadline = deadline
        unfinished = links.count
        wantsWritable = Array(repeating: false, count: links.count)
        events = Array(repeating: epoll_event(), count: max(1, links.count))
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        for (index, link) in links.enumerated() {
            let descriptor = link.connection.descriptor
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var event = cepoll_event(EPOLLIN.rawValue, Int32(index))
            precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0, "epoll_ctl failed")
        }
    }

    /// Sends the first batches, then answers readiness until every connection has finished.
    mutating func run() throws -> LoadOutcome {
        defer { close(epoll) }
        for index in links.indices { try startBatch(index) }
        let giveUp = deadline + nanoseconds(seconds: 30)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while unfinished > 0 {
            guard monotonicNanoseconds() < giveUp else {
                throw BenchError("the server on port \(links[0].connection.port) stopped answering: \(unfinished) connections wait")
            }
            let ready = waitForEvents()
            if ready < 0 {
                if errno == EINTR { continue }
                throw BenchError.system("epoll_wait")
            }
            for slot in 0..<Int(ready) {
                let index = Int(cepoll_event_fd(&events[slot]))
                let flags = cepoll_event_flags(&events[slot])
                if flags & EPOLLOUT.rawValue != 0 { try flush(index) }
                if flags & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { try receive(index, chunk: &chunk) }
            }
        }
        return outcome
    }

    /// `epoll_wait`'s result: polled (timeout 0) for up to `spinNanoseconds`, then a wait of up to 100 ms.
    private mutating func waitForEvents() -> Int32 {
        if spinNanoseconds > 0 {
            let started = monotonicNanoseconds()
            repeat {
                let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), 0) }
                if ready != 0 { return ready }
            } while monotonicNanoseconds() &- started < spinNanoseconds
        }
        return events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), 100) }
    }

    /// Writes the next batch of requests on link `index`, or marks it finished when there is none.
    private mutating func startBatch(_ index: Int) throws {
        let link = links[index]
        let now = monotonicNanoseconds()
        link.outgoing.removeAll(keepingCapacity: true)
        link.kinds.removeAll(keepingCapacity: true)
        link.written = 0
        link.answeredInBatch = 0
        switch source {
        case .random(var chooser, let grantPercent):
            if now >= deadline { break }
            for _ in 0..<pipeline {
                let kind: RequestKind = grantPercent > 0 && chooser.percent() < grantPercent ? .grant : .check
                requests.append(kind, user: chooser.next(), to: &link.outgoing)
                link.kinds.append(kind)
            }
            source = .random(chooser, grantPercent: grantPercent)
        case .sequential(var next, let end):
            if now >= deadline { break }
            while link.kinds.count < pipeline && next < end {
                requests.append(.grant, user: next, to: &link.outgoing)
                link.kinds.append(.grant)
                next += 1
            }
            source = .sequential(next: next, end: end)
        }
        guard !link.kinds.isEmpty else {
            link.finished = true
            unfinished -= 1
            return
        }
        link.batchStartedAt = now
        try flush(index)
    }

    /// Writes what the socket takes of the link's pending bytes; asks for EPOLLOUT when some remain.
    private mutating func flush(_ index: Int) throws {
        let link = links[index]
        let descriptor = link.connection.descriptor
        while link.written < link.outgoing.count {
            let sent = link.outgoing.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + link.written, raw.count - link.written, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                link.written += sent
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try watchWritability(index, true)
                return
            }
            throw BenchError.system("send to port \(link.connection.port)")
        }
        try watchWritability(index, false)
    }

    /// Asks the epoll set for link `index`'s writability too, or no longer; a call only when it changes.
    private mutating func watchWritability(_ index: Int, _ wanted: Bool) throws {
        guard wantsWritable[index] != wanted else { return }
        wantsWritable[index] = wanted
        var event = cepoll_event(EPOLLIN.rawValue | (wanted ? EPOLLOUT.rawValue : 0), Int32(index))
        guard epoll_ctl(epoll, EPOLL_CTL_MOD, links[index].connection.descriptor, &event) == 0 else {
            throw BenchError.system("epoll_ctl")
        }
    }

    /// Reads what arrived on link `index`, takes each complete answer line, and starts the next batch when
    /// the current one is fully answered.
    private mutating func receive(_ index: Int, chunk: inout [UInt8]) throws {
        let link = links[index]
        let count = chunk.withUnsafeMutableBytes { recv(link.connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            throw BenchError.system("recv from port \(link.connection.port)")
        }
        guard count > 0 else { throw BenchError("the server on port \(link.connection.port) closed a connection") }
        link.incoming.append(contentsOf: chunk[..<count])
        let now = monotonicNanoseconds()
        let counted = link.batchStartedAt >= measureFrom && link.batchStartedAt < deadline
        var consumed = 0
        try link.incoming.withUnsafeBytes { raw in
            while let newline = memchr(raw.baseAddress! + consumed, 0x0A, raw.count - consumed) {
                let end = raw.baseAddress!.distance(to: UnsafeRawPointer(newline))
                let line = UnsafeRawBufferPointer(rebasing: raw[consumed..<end])
                consumed = end + 1
                guard link.answeredInBatch < link.kinds.count else {
                    throw BenchError("the server on port \(link.connection.port) sent an answer nobody asked for")
                }
                let kind = link.kinds[link.answeredInBatch]
                link.answeredInBatch += 1
                guard counted else { continue }
                outcome.answered += 1
                outcome.histogram.record(now - link.batchStartedAt)
                switch requests.classify(line, kind: kind) {
                case .success: break
                case .inactive: outcome.inactive += 1
                case .failure:
                    outcome.errors += 1
                    if outcome.firstError == nil { outcome.firstError = String(decoding: line.prefix(300), as: UTF8.self) }
                }
            }
        }
        link.incoming.removeFirst(consumed)
        if link.answeredInBatch == link.kinds.count { try startBatch(index) }
    }
}
