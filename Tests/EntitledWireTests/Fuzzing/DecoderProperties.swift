import Foundation
import NIOCore

@testable import EntitledWire

/// What must hold for every request line, whatever its bytes, checked on each input of the decoder fuzz.
/// Not finding a crash is the first property; these are the rest.
///
/// Only what must hold is checked: Foundation accepts lines the decoder rightly refuses (a repeated known
/// field, nesting deeper than 32 levels, trailing garbage after a `\r`), so the comparison with it runs one
/// way, from what the decoder accepted.
struct DecoderProperties {
    /// The operations decoded at least once, and the codes of the refusals seen: the test's proof that the
    /// inputs reached every operation and every kind of refusal.
    private(set) var acceptedOperations: Set<Request.Operation> = []
    private(set) var refusalCodes: Set<ErrorCode> = []
    /// Lines `CompactCheckDecoder` read (each checked against the general decoder).
    private(set) var compactChecks = 0

    private static let documentedCodes = Set(ErrorCode.allCases.map(\.rawValue))

    /// Decodes `line` for a connection with `permissions` and returns what it broke, one sentence each.
    mutating func violations(of line: [UInt8], permitting permissions: OperationPermissions) -> [String] {
        let decoded = RequestDecoder.decode(line: ByteBuffer(bytes: line), permitting: permissions)
        var problems = responseViolations(of: decoded)
        if let id = decoded.id, FoundationJSON.parse(Array(id.readableBytesView)) == nil {
            problems.append("the echoed id \(Self.describe(Array(id.readableBytesView))) is not valid JSON")
        }
        // The line without the one "\r" the decoder ignores at its end.
        let text = line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line
        switch decoded.result {
        case .success(let request):
            acceptedOperations.insert(request.op)
            if !permissions.allows(request.op) {
                problems.append("\(request.op.rawValue) was decoded although the permissions refuse it")
            }
            if let object = FoundationJSON.parse(text) as? [String: Any] {
                // Foundation drops some raw U+FEFF in strings and keys, taking them for byte order marks: a
                // line holding one would read differently for a reason that is not the decoder's.
                if !FoundationJSON.containsByteOrderMark(text) {
                    problems += fieldViolations(of: request, against: object)
                }
            } else {
                problems.append("the decoder accepted a line that is not a JSON object to Foundation")
            }
            problems += encodingViolations(of: request.stringsByKey.map(\.value))
        case .failure(let error):
            refusalCodes.insert(error.code)
            if error.code == .badJSON, decoded.id != nil { problems.append("a bad_json refusal echoes an id") }
            if error.code != .badJSON, FoundationJSON.parse(text) == nil {
                problems.append("refused with \(error.code.rawValue), not bad_json, a line that is not JSON to Foundation")
            }
            if [.unauthorized, .forbidden].contains(error.code), error.code != permissions.refusalCode {
                problems.append("refused with \(error.code.rawValue), but the permissions refuse with \(permissions.refusalCode.rawValue)")
            }
        }
        if permissions != .everything {
            problems += permissionViolations(of: line, permitting: permissions, decoded: decoded)
        }
        problems += compactCheckViolations(of: line, permitting: permissions, decoded: decoded)
        return problems
    }

    /// A line the compact check decoder reads must be the very check the general decoder reads, with
    /// the same id: the fast path may only skip work, never answer differently.
    private mutating func compactCheckViolations(
        of line: [UInt8], permitting permissions: OperationPermissions, decoded: DecodedRequest
    ) -> [String] {
        guard let compact = CompactCheckDecoder.decode(line: ByteBuffer(bytes: line), permitting: permissions) else { return [] }
        compactChecks += 1
        guard case .success(.check(let query)) = decoded.result else {
            return ["the compact check decoder read a check the general decoder reads as \(decoded.result)"]
        }
        var problems: [String] = []
        if query.subject != compact.query.subject || query.filter != compact.query.filter || query.moment != compact.query.moment {
            problems.append("the compact check decoder read \(compact.query), the general one \(query)")
        }
        if compact.id != decoded.id || decoded.minimumSequence != 0 {
            problems.append("the compact check decoder read id \(String(describing: compact.id)), the general one \(String(describing: decoded.id))")
        }
        return problems
    }

    /// The response line the server would write for `decoded` (`pong` for any success) must be exactly
    /// one line holding a JSON object: `ok`, an `error` with a documented code and a message when it
    /// failed, and `id` exactly when the request had one.
    private func responseViolations(of decoded: DecodedRequest) -> [String] {
        var output = ByteBuffer()
        switch decoded.result {
        case .success: ResponseEncoder.write(.pong, id: decoded.id, into: &output)
        case .failure(let error): ResponseEncoder.write(error, id: decoded.id, into: &output)
        }
        let bytes = Array(output.readableBytesView)
        guard bytes.last == UInt8(ascii: "\n"), bytes.firstIndex(of: UInt8(ascii: "\n")) == bytes.count - 1 else {
            return ["the response is not exactly one line: \(Self.describe(bytes))"]
        }
        guard let object = FoundationJSON.parse(Array(bytes.dropLast())) as? [String: Any] else {
            return ["the response is not a JSON object: \(Self.describe(bytes))"]
        }
        var problems: [String] = []
        if (object["id"] != nil) != (decoded.id != nil) { problems.append("the response's id does not match the request's") }
        switch decoded.result {
        case .success:
            if object["ok"] as? Bool != true { problems.append("a success without \"ok\":true: \(Self.describe(bytes))") }
        case .failure(let wireError):
            let error = object["error"] as? [String: Any]
            let code = error?["code"] as? String
            if object["ok"] as? Bool != false { problems.append("a failure without \"ok\":false: \(Self.describe(bytes))") }
            if code != wireError.code.rawValue || !Self.documentedCodes.contains(code ?? "") {
                problems.append("the error code \(code ?? "nil") is not the documented \(wireError.code.rawValue)")
            }
            if (error?["message"] as? String ?? "").isEmpty { problems.append("an error without a message: \(Self.describe(bytes))") }
        }
        return problems
    }

    /// The decoder and Foundation must read the same operation, strings, products and limit from a line
    /// the decoder accepted: escapes, surrogate pairs and non-ASCII decoded alike.
    private func fieldViolations(of request: Request, against object: [String: Any]) -> [String] {
        var problems: [String] = []
        if object["op"] as? String != request.op.rawValue {
            problems.append("decoded op \(request.op.rawValue), Foundation reads \(String(describing: object["op"]))")
        }
        for (key, value) in request.stringsByKey {
            let foundation = object[key] as? String
            if foundation.map({ Array($0.unicodeScalars) }) != Array(value.unicodeScalars) {
                problems.append("\"\(key)\" decoded as \(value.debugDescription), Foundation reads \(foundation.debugDescription)")
            }
        }
        let foundationProducts = (object["products"] as? [String])?.map { Array($0.unicodeScalars) }
        if case .define(_, let products, _) = request, foundationProducts != products.map({ Array($0.unicodeScalars) }) {
            problems.append("\"products\" decoded as \(products), Foundation reads \(String(describing: object["products"]))")
        }
        if case .history(_, let limit, _) = request, let sent = object["limit"] as? Int, sent != limit {
            problems.append("\"limit\" decoded as \(limit), Foundation reads \(sent)")
        }
        return problems
    }

    /// Every string a request carries may come back in an answer (a membership's user, an unknown op in a
    /// message): written by the response encoder, Foundation must read back the same scalars.
    private func encodingViolations(of strings: [String]) -> [String] {
        strings.compactMap { string in
            var buffer = ByteBuffer()
            buffer.writeJSONString(string)
            let written = Array(buffer.readableBytesView)
            let readBack = FoundationJSON.parse(written) as? String
            // The encoder writes U+FEFF as it is, and Foundation drops some of those: compared without them.
            guard readBack.map(FoundationJSON.scalarsWithoutByteOrderMarks) != FoundationJSON.scalarsWithoutByteOrderMarks(string)
            else { return nil }
            return "\(string.debugDescription) was written as \(Self.describe(written)), read back as \(readBack.debugDescription)"
        }
    }

    /// Permissions decide only whether a known operation runs: a line decodes the same for a connection
    /// that may run everything, except that an operation the permissions leave out is refused with their
    /// code, before its fields are looked at; a line that is not JSON or names no operation is refused
    /// the same for both.
    private func permissionViolations(
        of line: [UInt8],
        permitting permissions: OperationPermissions,
        decoded: DecodedRequest
    ) -> [String] {
        let unrestricted = RequestDecoder.decode(line: ByteBuffer(bytes: line), permitting: .everything)
        switch (unrestricted.result, decoded.result) {
        case (.success(let request), .success(let restricted)) where restricted.op == request.op && permissions.allows(request.op):
            return []
        case (.success(let request), .failure(let error)) where !permissions.allows(request.op) && error.code == permissions.refusalCode:
            return []
        case (.failure(let open), .failure(let restricted)) where open.code == restricted.code:
            return []
        case (.failure(let open), .failure(let restricted)) where open.code == .badRequest && restricted.code == permissions.refusalCode:
            return []  // a field problem of an operation the permissions refuse: refused before the fields
        default:
            let allowed = permissions.operations.map(\.rawValue)
            return ["decoded as \(Self.outcome(unrestricted)) for everything, as \(Self.outcome(decoded)) for \(allowed)"]
        }
    }

    private static func outcome(_ decoded: DecodedRequest) -> String {
        switch decoded.result {
        case .success(let request): return request.op.rawValue
        case .failure(let error): return "\(error.code.rawValue) (\(error.message))"
        }
    }

    /// `bytes` as text a person can read and paste back: printable ASCII as it is, the rest as `\xNN`;
    /// long inputs are cut after 400 bytes.
    static func describe(_ bytes: [UInt8]) -> String {
        var text = "\(bytes.count) bytes: "
        for byte in bytes.prefix(400) {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return bytes.count > 400 ? text + "…" : text
    }
}
