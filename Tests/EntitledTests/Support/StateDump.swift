import EntitledClient

/// Everything a set of subjects can see, their audit trails, and the catalog, as the server answers
/// them: two dumps taken before and after a restart must be equal line for line.
struct StateDump: Equatable, CustomStringConvertible {
    var lines: [String]

    init(of connection: EntitledAsyncConnection, users: [String], devices: [String]) async throws {
        var requests: [String] = []
        for user in users { requests.append(#"{"op":"memberships","user":"\#(user)","limit":1000"#) }
        for device in devices { requests.append(#"{"op":"memberships","device":"\#(device)","limit":1000"#) }
        for user in users { requests.append(#"{"op":"history","user":"\#(user)","limit":1000"#) }
        for device in devices { requests.append(#"{"op":"history","device":"\#(device)","limit":1000"#) }
        lines = []
        // Every page of each listing, one line each: `next` leads to the one after.
        for request in requests {
            var after = ""
            while true {
                let answer = try await connection.send(line: request + after + "}")
                lines.append(answer.line)
                guard let next = answer["next"]?.stringValue else { break }
                after = #","after":"\#(next)""#
            }
        }
        lines.append(try await connection.send(line: #"{"op":"catalog"}"#).line)
    }

    var description: String { lines.joined(separator: "\n") }
}
