import EntitledClient

/// One answer of `export`, checked and turned into the JSON lines the console writes: the header line
/// (first page only), a `{"membership":{...}}` line a membership, then a `{"history":{...}}` line an
/// audit entry. Each object is written as the server sent it, field for field.
struct ExportPage {
    /// The answer's `export` object, `{"seq":E,"time":T}`, as sent.
    let export: JSONValue
    let sequence: UInt64
    let time: String
    /// The catalog; only the first page carries it.
    let entitlements: JSONValue?
    let memberships: [JSONValue]
    let history: [JSONValue]
    /// The cursor of the next page; `nil` on the last.
    let next: String?

    /// Reads an `ok` answer; `expectsHistory` when the request asked for `history`, which every page then has.
    init(_ answer: EntitledResponse, expectsHistory: Bool) throws(ExportFailure) {
        guard let export = answer["export"], let sequence = export["seq"]?.intValue, sequence >= 0,
            let time = export["time"]?.stringValue
        else { throw .malformedPage(#"an answer to export without "export":{"seq":...,"time":...}"#) }
        guard let memberships = answer["memberships"]?.arrayValue else {
            throw .malformedPage(#"an answer to export without its "memberships""#)
        }
        let history = answer["history"]?.arrayValue
        if expectsHistory && history == nil { throw .malformedPage(#"an answer to export with history without its "history""#) }
        self.export = export
        self.sequence = UInt64(sequence)
        self.time = time
        self.entitlements = answer["entitlements"]
        self.memberships = memberships
        self.history = history ?? []
        self.next = answer["next"]?.stringValue
    }

    /// `{"export":{"seq":E,"time":T},"entitlements":{...}}`: the first line of the whole export.
    func headerLine() throws(ExportFailure) -> String {
        guard let entitlements else { throw .malformedPage(#"the first page of the export without its "entitlements""#) }
        return JSONValue.object([("export", export), ("entitlements", entitlements)]).jsonText
    }

    /// The page's memberships, then its audit entries, one line each.
    var lines: [String] {
        memberships.map { JSONValue.object([("membership", $0)]).jsonText } + history.map { JSONValue.object([("history", $0)]).jsonText }
    }
}
