/// Paged reads (protocol version 4): `memberships` and `history` answer at most `limit` items, and an
/// answer with more to come carries `next`, which the request for the next page passes back as `after`.
extension EntitledRequest {
    /// The most items one page of `memberships` or `history` may hold; the pages `allMemberships` and
    /// `allHistory` ask for are this size.
    public static let maximumPageLimit = 1000

    /// The operations whose answers come in pages, and the field of the answer that holds each page's items.
    static let pagedLists: [String: String] = ["memberships": "memberships", "history": "history"]

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

/// Follows the pages of one paged read: the request for each page, and when the listing ends. The logic
/// of `allPages(of:)` on `EntitledConnection`, `EntitledAsyncConnection` and `EntitledPool`, which only
/// differ in how they send.
struct PageWalk {
    /// The request for the page to ask for next.
    private(set) var request: EntitledRequest
    /// The field of the answer that holds the page's items; `nil` for an operation this library does not
    /// know to be paged (its pages are followed all the same).
    private let listKey: String?
    /// Every `next` seen so far: a server that gave one twice would be followed forever.
    private var cursors: Set<String> = []

    /// Starts at `request`'s page; a `memberships` or `history` request without a `limit` asks for pages
    /// of `EntitledRequest.maximumPageLimit`, the fewest round trips.
    init(_ request: EntitledRequest) {
        listKey = EntitledRequest.pagedLists[request.op]
        let hasLimit = request.fields.contains { $0.key == "limit" }
        self.request =
            listKey != nil && !hasLimit ? request.settingField("limit", to: .number(String(EntitledRequest.maximumPageLimit))) : request
    }

    /// Takes the answer to `request`: whether a page follows it (then `request` asks for that one).
    /// - Throws: `server(failure)` for an error answer (`over_limit`, `bad_request` for an `after` the
    ///   server does not know, ...); `malformedResponse` for an answer without its list, or whose `next`
    ///   was given before.
    mutating func advance(past answer: EntitledResponse) throws(EntitledClientError) -> Bool {
        if let failure = answer.error { throw .server(failure) }
        if let listKey, answer[listKey]?.arrayValue == nil {
            throw .malformedResponse(line: answer.line, reason: "an answer to \(request.op) must have an array \"\(listKey)\"")
        }
        guard let next = answer.next else { return false }
        guard cursors.insert(next).inserted else {
            throw .malformedResponse(line: answer.line, reason: "the server gave the \"next\" \(next) twice; following it would never end")
        }
        request = request.page(after: next)
        return true
    }
}
