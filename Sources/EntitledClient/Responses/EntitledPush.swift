/// A line the server pushed without being asked, after a `watch`: `{"push":"access","cause":C,
/// "sequence":N,"membership":{...}}` when the access of a watched subject changed. It has `push` and never `ok`,
/// which is how it is told from an answer.
public struct EntitledPush: Sendable, Hashable {
    /// The line as the server wrote it, without the newline.
    public let line: String
    /// The parsed line.
    public let body: JSONValue

    /// Reads a pushed line; `nil` for a line that is not one (an answer, or not JSON).
    public init?(pushedLine line: String) {
        // Most lines are answers, which the server begins with `{"ok":`: passed over at once (a search for
        // the key through a long answer cost an importer a tenth of its time). Any other line is looked
        // for the key before parsing it whole.
        guard line.utf8.count >= 8, !line.utf8.starts(with: #"{"ok":"#.utf8), line.contains(#""push""#),
            let body = try? JSONValue(parsing: line), body["push"]?.stringValue != nil, body["ok"] == nil
        else { return nil }
        self.line = line
        self.body = body
    }

    /// What the push is about: `access` (a change of a watched subject's access), or a kind a newer server
    /// added.
    public var kind: String { body["push"]?.stringValue ?? "" }

    /// What changed the access: `grant`, `claim`, `revoke`, an event type (`renewal`, `refund`, ...), or
    /// `expired` when it ran out by itself.
    public var cause: String? { body["cause"]?.stringValue }

    /// The number of the change; `nil` for `expired`, which is not a change. Two writers' changes of one
    /// membership can be pushed in either order: the higher number is the newer state.
    public var sequence: Int? { body["sequence"]?.intValue }

    /// The membership as it is after the change.
    public var membership: MembershipInfo? { body["membership"].flatMap(MembershipInfo.init(json:)) }

    public subscript(key: String) -> JSONValue? { body[key] }
}
