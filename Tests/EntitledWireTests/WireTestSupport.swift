import Foundation
import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// Decodes one request line given as text (without its `\n`).
func decode(_ line: String) -> DecodedRequest {
    RequestDecoder.decode(line: ByteBuffer(string: line))
}

/// Decodes one request line given as raw bytes (to send invalid UTF-8).
func decode(bytes: [UInt8]) -> DecodedRequest {
    RequestDecoder.decode(line: ByteBuffer(bytes: bytes))
}

/// The request `line` decodes to; records an issue and throws if it was refused.
func request(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Request {
    switch decode(line).result {
    case .success(let request):
        return request
    case .failure(let error):
        Issue.record("\(line) was refused: \(error.code.rawValue): \(error.message)", sourceLocation: sourceLocation)
        throw error
    }
}

struct UnexpectedSuccess: Error {}

/// The error `decoded` carries; records an issue and throws if it decoded.
func failure(of decoded: DecodedRequest, sourceLocation: SourceLocation = #_sourceLocation) throws -> WireError {
    switch decoded.result {
    case .success(let request):
        Issue.record("expected a refusal, decoded \(request)", sourceLocation: sourceLocation)
        throw UnexpectedSuccess()
    case .failure(let error):
        return error
    }
}

/// The error `line` is refused with.
func failure(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> WireError {
    try failure(of: decode(line), sourceLocation: sourceLocation)
}

/// The response line for `response`, as text (with its `\n`).
func encode(_ response: Response, id: ByteBuffer? = nil) -> String {
    var buffer = ByteBuffer()
    ResponseEncoder.write(response, id: id, into: &buffer)
    return String(buffer: buffer)
}

/// The failure line for `error`, as text (with its `\n`).
func encode(_ error: WireError, id: ByteBuffer? = nil) -> String {
    var buffer = ByteBuffer()
    ResponseEncoder.write(error, id: id, into: &buffer)
    return String(buffer: buffer)
}

/// What the server writes for `line` when a successful request answers `response`: the decoded request's
/// error, or `response`, with the request's `id` echoed.
func respond(to line: String, with response: Response = .pong) -> String {
    let decoded = decode(line)
    switch decoded.result {
    case .success: return encode(response, id: decoded.id)
    case .failure(let error): return encode(error, id: decoded.id)
    }
}

/// Parses a response line with Foundation's JSONSerialization: proof that it is valid JSON.
func parseJSONObject(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8), options: [])
    return try #require(object as? [String: Any], sourceLocation: sourceLocation)
}

extension Request {
    var grant: Grant? {
        if case .grant(let grant, _) = self { return grant }
        return nil
    }

    var accessQuery: AccessQuery? {
        if case .check(let query) = self { return query }
        return nil
    }
}

/// A bad_json refusal never has an id to echo: the line could not be read.
func expectBadJSON(
    _ decoded: DecodedRequest,
    mentioning fragment: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let error = try failure(of: decoded, sourceLocation: sourceLocation)
    #expect(error.code == .badJSON, "\(error.message)", sourceLocation: sourceLocation)
    #expect(decoded.id == nil, sourceLocation: sourceLocation)
    if let fragment {
        #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
    }
}

func expectBadJSON(
    _ line: String,
    mentioning fragment: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    try expectBadJSON(decode(line), mentioning: fragment, sourceLocation: sourceLocation)
}

/// A bad_request refusal whose message contains each of `fragments` (the field it names, quoted).
func expectBadRequest(
    _ line: String,
    mentioning fragments: String...,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let error = try failure(line, sourceLocation: sourceLocation)
    #expect(error.code == .badRequest, "\(error.message)", sourceLocation: sourceLocation)
    for fragment in fragments {
        #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
    }
}
