/// Paged reads (protocol version 4): `memberships` and `history` answer at most `limit` items, and an
/// answer with more to come carries `next`, which the request for the next page passes back as `after`.
/// Following the pages to the end is `PageWalk`'s.
extension EntitledRequest {
    /// The most items one page of `memberships` or `history` may hold; the pages `allMemberships` and
    /// `allHistory` ask for are this size.
    public static let maximumPageLimit = 1000

    /// The same request for the page after the one whose answer's `next` is `cursor`: its `after` set to
    /// `cursor` (replacing one it had), every other field (`limit`, `minSeq`, `at`, ...) kept as it was.
    public func page(after cursor: String) -> EntitledRequest {
        settingField("after", to: .string(cursor))
    }

    /// The request with field `key` set to `value`: in place when it has the field, else added last.
    func settingField(_ key: String, to value: JSONValue) -> EntitledRequest {
        var request = self
        if let index = request.fields.lastIndex(where: { $0.key == key }) {
            request.fields[index].value = value
        } else {
            request.fields.append((key, value))
        }
        return request
    }
}
