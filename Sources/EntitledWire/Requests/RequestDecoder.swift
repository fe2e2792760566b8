import NIOCore

/// One request line, decoded: the `id` to echo and the request or the reason it was refused.
public struct DecodedRequest: Sendable {
    /// The raw JSON of the request's `id`, if it had one and it could be read; echoed in the response.
    public var id: ByteBuffer?
    public var result: Result<Request, WireError>
    /// The request's `minSeq` (`check`, `memberships` and `customer` only): the change the store must have
    /// applied before it is answered; 0 when it has none. Beside the request rather than in it: the server
    /// looks at it before running the request, and a check's `Request` stays as small as it was.
    public var minimumSequence: UInt64 = 0

    public init(id: ByteBuffer?, result: Result<Request, WireError>, minimumSequence: UInt64 = 0) {
        self.id = id
        self.result = result
        self.minimumSequence = minimumSequence
    }
}

/// Turns request lines into typed requests.
public enum RequestDecoder {
    /// Decodes one line (without its `\n`; a trailing `\r` is tolerated). An operation `permissions` does
    /// not allow is refused with their error once the line is known to name it, before its fields are
    /// validated.
    public static func decode(line: ByteBuffer, permitting permissions: OperationPermissions = .everything) -> DecodedRequest {
        line.withUnsafeReadableBytes { bytes in
            var bytes = bytes
            if bytes.last == UInt8(ascii: "\r") {
                bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast())
            }
            let fields: RequestFields
            do throws(JSONSyntaxError) {
                fields = try RequestFields(scanning: bytes)
            } catch {
                let message =
                    bytes.isEmpty
                    ? "empty line: each line must be one JSON object such as {\"op\":\"ping\"}"
                    : "invalid JSON at byte \(error.offset): \(error.problem)"
                return DecodedRequest(id: nil, result: .failure(WireError(.badJSON, message)))
            }
            let id = fields.id.flatMap { line.getSlice(at: line.readerIndex + $0.lowerBound, length: $0.count) }
            do throws(WireError) {
                return DecodedRequest(id: id, result: .success(try fields.request(permitting: permissions)), minimumSequence: fields.minSeq)
            } catch {
                return DecodedRequest(id: id, result: .failure(error))
            }
        }
    }
}
