/// What a closed-loop connection sends, request after request (the snapshot benchmark's checks; the
/// measured loads against both servers go through `LoadEngine`).
enum Workload: Sendable {
    /// `{"op":"check","user":"u<random below users>","entitlement":"pro"}` against loaded users.
    case entitledCheck(users: Int, seed: UInt64)
}

/// How one answer turned out.
enum AnswerKind {
    case success
    /// A check that succeeded but said `"active":false`: a loaded user should be active.
    case inactive
    case failure
}

/// Builds one connection's requests into a reused buffer and classifies the answers. The fixed parts are
/// encoded once; per request only the number is written, so a request costs no allocation.
struct RequestEncoder {
    /// The bytes before the number.
    private let head: [UInt8]
    /// The bytes after the number.
    private let tail: [UInt8]
    private let users: Int
    private var random: UInt64
    /// The request just encoded; its storage is reused.
    private(set) var bytes: [UInt8] = []

    init(_ workload: Workload, connection: Int) {
        switch workload {
        case .entitledCheck(let users, let seed):
            head = Array("{\"op\":\"check\",\"user\":\"u".utf8)
            tail = Array("\",\"entitlement\":\"pro\"}\n".utf8)
            self.users = max(1, users)
            // Distinct, non-zero xorshift states per connection.
            random = (seed &+ UInt64(connection + 1) &* 0x9E37_79B9_7F4A_7C15) | 1
        }
        bytes.reserveCapacity(256)
    }

    /// Encodes the next request (for a random user) into `bytes`.
    @inline(__always)
    mutating func encodeNext() {
        bytes.removeAll(keepingCapacity: true)
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        bytes.append(contentsOf: head)
        bytes.appendDecimal(Int(random % UInt64(users)))
        bytes.append(contentsOf: tail)
    }

    /// Classifies an answer line by its first bytes, without decoding it.
    @inline(__always)
    func classify(_ line: UnsafeRawBufferPointer) -> AnswerKind {
        if line.starts(with: "{\"ok\":true,\"active\":true") { return .success }
        return line.starts(with: "{\"ok\":true,\"active\":false") ? .inactive : .failure
    }
}

/// The number of decimal digits of a non-negative `value`.
@inline(__always)
func decimalDigits(_ value: Int) -> Int {
    var digits = 1
    var rest = value / 10
    while rest > 0 {
        digits += 1
        rest /= 10
    }
    return digits
}

extension Array where Element == UInt8 {
    /// Appends a non-negative integer in decimal, in place (no String in between).
    @inline(__always)
    mutating func appendDecimal(_ value: Int) {
        let digits = decimalDigits(value)
        let first = count
        for _ in 0..<digits { append(48) }
        var rest = value
        var index = first + digits - 1
        while index >= first {
            self[index] = UInt8(48 + rest % 10)
            rest /= 10
            index -= 1
        }
    }
}
