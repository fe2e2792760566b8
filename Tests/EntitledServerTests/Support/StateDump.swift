import EntitledClient

/// Everything a set of subjects can see, their audit trails, and the catalog, as the server answers
/// them: two dumps taken before and after a restart must be equal line for line.
struct StateDump: Equatable, CustomStringConvertible {
    var lines: [String]

    init(of connection: EntitledAsyncConnection, users: [String], devices: [String]) async throws {
        var requests: [String] = []
        for user in users { requests.append(#"{"op":"memberships","user":"\#(user)"}"#) }
        for device in devices { requests.append(#"{"op":"memberships","device":"\#(device)"}"#) }
        for user in users { requests.append(#"{"op":"history","user":"\#(user)","limit":1000}"#) }
        for device in devices { requests.append(#"{"op":"history","device":"\#(device)","limit":1000}"#) }
        requests.append(#"{"op":"catalog"}"#)
        lines = []
        for request in requests {
            lines.append(try await connection.send(line: request).line)
        }
    }

    var description: String { lines.joined(separator: "\n") }
}
