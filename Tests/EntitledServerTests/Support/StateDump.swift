/// Everything a set of subjects can see, their audit trails, and the catalog, as the server answers
/// them: two dumps taken before and after a restart must be equal line for line.
struct StateDump: Equatable, CustomStringConvertible {
    var lines: [String]

    init(of connection: LineConnection, users: [String], devices: [String]) throws {
        lines = []
        for user in users {
            lines.append(try exchange(connection, #"{"op":"memberships","user":"\#(user)"}"#))
        }
        for device in devices {
            lines.append(try exchange(connection, #"{"op":"memberships","device":"\#(device)"}"#))
        }
        for user in users {
            lines.append(try exchange(connection, #"{"op":"history","user":"\#(user)","limit":1000}"#))
        }
        for device in devices {
            lines.append(try exchange(connection, #"{"op":"history","device":"\#(device)","limit":1000}"#))
        }
        lines.append(try exchange(connection, #"{"op":"catalog"}"#))
    }

    var description: String { lines.joined(separator: "\n") }
}

private func exchange(_ connection: LineConnection, _ request: String) throws -> String {
    try connection.send(request + "\n")
    guard let line = try connection.readLine() else { throw LineConnection.Failure(description: "closed during \(request)") }
    return line
}
