/// entitled's recovery log line: `... ms=412 ... replayed=5000 ... recovered the data directory`.
struct RecoveryLine: Codable {
    let line: String
    let milliseconds: Int?
    let replayed: Int?
    let memberships: Int?
    let snapshot: String?

    init(_ line: String) {
        var fields: [String: String] = [:]
        for token in line.split(separator: " ") {
            guard let equals = token.firstIndex(of: "=") else { continue }
            fields[String(token[..<equals])] = String(token[token.index(after: equals)...])
        }
        self.line = line
        milliseconds = fields["ms"].flatMap { Int($0) }
        replayed = fields["replayed"].flatMap { Int($0) }
        memberships = fields["memberships"].flatMap { Int($0) }
        snapshot = fields["snapshot"]
    }
}
