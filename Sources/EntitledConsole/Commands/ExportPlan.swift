import EntitledClient

/// What an `export` line asks for: which pages to read and where their lines go. The console reads
/// the pages itself (`ExportReader`), one request after another on its connection, since an export is
/// held by the one server that answered its first page.
public struct ExportPlan: Sendable, Hashable {
    /// Whether each page also carries its memberships' audit entries (`history`).
    public var includesHistory: Bool
    /// Memberships a page (`limit=N`); `nil` leaves it to the server (1000).
    public var limit: Int?
    /// The file the lines go to (`to FILE`); `nil` for standard output.
    public var file: String?

    public init(includesHistory: Bool = false, limit: Int? = nil, file: String? = nil) {
        self.includesHistory = includesHistory
        self.limit = limit
        self.file = file
    }

    /// The request for the first page (`cursor` nil), which takes the copy, or for the page after the
    /// one whose `next` is `cursor`.
    public func request(after cursor: String?) -> EntitledRequest {
        .export(after: cursor, limit: limit, history: includesHistory)
    }
}
