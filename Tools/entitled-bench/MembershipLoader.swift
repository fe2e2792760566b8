import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives users 0..<users one membership each, as fast as the server takes them, and checks every answer.
///
/// - entitled: `{"op":"grant","user":"<12 digits>","product":"prod_pro","source":"app_store","expiresAt":"…"}`,
///   each answer must start with `{"ok":true`.
/// - Redis: one hash per user with the fields of that membership, `HSET m:<12 digits> id <16 hex> product
///   prod_pro user <12 digits> source app_store created_at <ms> expires_at <ms>` (RESP arrays), each answer
///   must be `:6` (six new fields).
///
/// The approach of `PipelinedLoader`: per connection, a writer thread keeps up to `pipeline` requests in
/// flight and a reader thread takes the answers (a writer that also had to read could deadlock with the
/// server, which stops reading a connection whose answers pile up unread). The first wrong answer ends the
/// load with an error naming it.
enum MembershipLoader {
    /// Loads the users; returns the seconds it took.
    /// - Parameter expiresAt: when every membership ends (entitled's `expiresAt`, Redis's `expires_at`).
    static func load(
        port: UInt16, target: Target, users: Int, connections: Int, pipeline: Int, expiresAt: Date,
        timeLimitSeconds: Double = 3600
    ) throws -> Double {
        let count = max(1, min(connections, users))
        let links = try (0..<count).map { _ in try TCPConnection(port: port) }
        let windows = links.map { _ in InFlightWindow(capacity: pipeline) }
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: timeLimitSeconds)
        let builder = RequestBuilder(target: target, expiresAt: expiresAt)
        let slices = (0..<count).map { index in (users * index / count)..<(users * (index + 1) / count) }
        // Several lines per write, a quarter of the window at a time, so the window refills while answers come.
        let chunkLines = max(1, min(pipeline / 4, 256))
        let firstFailure = FirstFailure()
        let started = monotonicNanoseconds()
        do {
            _ = try onThreads(2 * count, name: "memory-load-\(target.rawValue)") { thread -> Int in
                let index = thread / 2
                let link = links[index]
                let window = windows[index]
                do {
                    if thread % 2 == 0 {
                        try write(
                            slices[index], builder: builder, seed: UInt64(index + 1), chunkLines: chunkLines, to: link,
                            window: window, deadline: deadline
                        )
                    } else {
                        try read(slices[index].count, target: target, from: link, window: window)
                    }
                    return 0
                } catch {
                    firstFailure.record(error)
                    // Wake the other half of this connection, whichever it is.
                    window.fail()
                    link.shutdownBoth()
                    throw error
                }
            }
        } catch {
            // The cause, not the errors it set off in the other half of its connection.
            throw firstFailure.error ?? error
        }
        return Double(monotonicNanoseconds() - started) / 1e9
    }

    private static func write(
        _ users: Range<Int>, builder: RequestBuilder, seed: UInt64, chunkLines: Int, to link: TCPConnection,
        window: InFlightWindow, deadline: UInt64
    ) throws {
        var random = SplitMix64(seed: seed ^ UInt64(truncatingIfNeeded: Int(Date().timeIntervalSince1970 * 1000)))
        var chunk: [UInt8] = []
        chunk.reserveCapacity(chunkLines * 200)
        var next = users.lowerBound
        while next < users.upperBound {
            let end = min(next + chunkLines, users.upperBound)
            chunk.removeAll(keepingCapacity: true)
            let createdAt = Int(Date().timeIntervalSince1970 * 1000)
            for user in next..<end {
                builder.append(user: user, createdAtMilliseconds: createdAt, random: &random, to: &chunk)
            }
            try window.reserve(end - next, deadline: deadline)
            try link.writeAll(chunk)
            next = end
        }
    }

    private static func read(_ count: Int, target: Target, from link: TCPConnection, window: InFlightWindow) throws {
        let reader = LineReader(link)
        var answered = 0
        var unreleased = 0
        while answered < count {
            let line = try reader.readLine()
            let accepted: Bool
            switch target {
            case .entitled: accepted = line.starts(with: #"{"ok":true"#)
            case .redis: accepted = line.count == 3 && line.starts(with: ":6\r")
            }
            guard accepted else {
                let answer = String(decoding: line.prefix(300), as: UTF8.self)
                throw BenchError(
                    "\(target.rawValue) refused a membership after \(answered) answers on this connection: \(answer)"
                )
            }
            answered += 1
            unreleased += 1
            if unreleased == 32 || answered == count {
                window.release(unreleased)
                unreleased = 0
            }
        }
    }
}

/// Writes the request giving one user its membership, in the protocol of the target.
private struct RequestBuilder: Sendable {
    let target: Target
    private let entitledHead = Array(#"{"op":"grant","user":""#.utf8)
    private let entitledTail: [UInt8]
    private let redisHead = Array("*14\r\n$4\r\nHSET\r\n$14\r\nm:".utf8)
    private let redisAfterKey = Array("\r\n$2\r\nid\r\n$16\r\n".utf8)
    private let redisAfterId = Array("\r\n$7\r\nproduct\r\n$8\r\nprod_pro\r\n$4\r\nuser\r\n$12\r\n".utf8)
    private let redisAfterUser = Array("\r\n$6\r\nsource\r\n$9\r\napp_store\r\n$10\r\ncreated_at\r\n$".utf8)
    private let redisExpiresField: [UInt8]
    private static let hexDigits = Array("0123456789abcdef".utf8)

    init(target: Target, expiresAt: Date) {
        self.target = target
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        entitledTail = Array(
            (#"","product":"prod_pro","source":"app_store","expiresAt":""# + formatter.string(from: expiresAt) + "\"}\n").utf8
        )
        let expiresMilliseconds = Int(expiresAt.timeIntervalSince1970) * 1000
        var field = Array("\r\n$10\r\nexpires_at\r\n$".utf8)
        field.appendDecimal(decimalDigits(expiresMilliseconds))
        field += Array("\r\n".utf8)
        field.appendDecimal(expiresMilliseconds)
        field += Array("\r\n".utf8)
        redisExpiresField = field
    }

    func append(user: Int, createdAtMilliseconds: Int, random: inout SplitMix64, to bytes: inout [UInt8]) {
        switch target {
        case .entitled:
            bytes += entitledHead
            LoadRequests.appendDigits(user, to: &bytes)
            bytes += entitledTail
        case .redis:
            bytes += redisHead
            LoadRequests.appendDigits(user, to: &bytes)
            bytes += redisAfterKey
            // 64 random bits, as entitled's membership ids hold, in 16 hex digits.
            let id = random.next()
            for shift in stride(from: 60, through: 0, by: -4) {
                bytes.append(Self.hexDigits[Int((id >> UInt64(shift)) & 0xF)])
            }
            bytes += redisAfterId
            LoadRequests.appendDigits(user, to: &bytes)
            bytes += redisAfterUser
            bytes.appendDecimal(decimalDigits(createdAtMilliseconds))
            bytes += [13, 10]
            bytes.appendDecimal(createdAtMilliseconds)
            bytes += redisExpiresField
        }
    }
}

/// SplitMix64: the random bits of the Redis membership ids (fast, no lock, one per writer thread).
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The first error any loader thread ran into, in time.
private final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var first: (any Error)?

    func record(_ error: any Error) {
        lock.lock()
        if first == nil { first = error }
        lock.unlock()
    }

    var error: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return first
    }
}
