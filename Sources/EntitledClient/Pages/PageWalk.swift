/// Follows the pages of one paged read to the end: the request for each page, when the listing ends, the
/// guard against a server that would send the client round forever, and the items the pages hold.
///
/// The one home of the paging rules (PROTOCOL.md, "Pages"), whichever connection sends the requests: the
/// blocking `EntitledConnection` and the `EntitledAsyncSender`s (`EntitledAsyncConnection`,
/// `EntitledPool`) each drive it with the same three lines, and differ only in how they send:
///
///     var walk = PageWalk(request)
///     while let request = walk.nextRequest { try walk.take(send(request)) }
///     return walk.pages
struct PageWalk {
    /// The request for the page to ask for next; `nil` once a page came without a `next`: the listing
    /// has ended.
    private(set) var nextRequest: EntitledRequest?
    /// Every page taken so far, in order.
    private(set) var pages: [EntitledResponse] = []
    /// The operation walked, for the errors' reasons.
    private let op: String
    /// The field of the answer that holds the page's items; `nil` for an operation this library does not
    /// know to be paged (its pages are followed all the same).
    private let listKey: String?
    /// Every `next` seen so far: a server that gave one twice would be followed forever.
    private var cursors: Set<String> = []

    /// The operations whose answers come in pages, and the field of the answer that holds each page's items.
    private static let listKeys: [String: String] = ["memberships": "memberships", "history": "history"]

    /// Starts at `request`'s page; a `memberships` or `history` request without a `limit` asks for pages
    /// of `EntitledRequest.maximumPageLimit`, the fewest round trips.
    init(_ request: EntitledRequest) {
        op = request.op
        listKey = Self.listKeys[request.op]
        let hasLimit = request.fields.contains { $0.key == "limit" }
        nextRequest =
            listKey != nil && !hasLimit ? request.settingField("limit", to: .number(String(EntitledRequest.maximumPageLimit))) : request
    }

    /// Takes the answer to `nextRequest`, which becomes the request for the page after it (its `after` set
    /// to the answer's `next`, every other field kept), or `nil` when the answer has no `next`.
    /// - Throws: `server(failure)` for an error answer (`over_limit`, which asking again would not change,
    ///   `bad_request` for an `after` the server no longer knows, ...); `malformedResponse` for an answer
    ///   without its list, or whose `next` was given before. The walk is over then: the pages taken
    ///   before are dropped with it, since a listing with a hole in it is not the listing.
    mutating func take(_ answer: EntitledResponse) throws(EntitledClientError) {
        guard let asked = nextRequest else { preconditionFailure("PageWalk.take(_:) after the last page") }
        if let failure = answer.error { throw .server(failure) }
        if let listKey, answer[listKey]?.arrayValue == nil {
            throw .malformedResponse(line: answer.line, reason: "an answer to \(op) must have an array \"\(listKey)\"")
        }
        pages.append(answer)
        guard let next = answer.next else {
            nextRequest = nil
            return
        }
        guard cursors.insert(next).inserted else {
            throw .malformedResponse(line: answer.line, reason: "the server gave the \"next\" \(next) twice; following it would never end")
        }
        nextRequest = asked.page(after: next)
    }

    /// The memberships of a `memberships` walk, page after page (`take` made sure each page has its list).
    var memberships: [MembershipInfo] { pages.flatMap { $0.memberships ?? [] } }

    /// The entries of a `history` walk, page after page.
    var history: [HistoryEntry] { pages.flatMap { $0.history ?? [] } }
}
