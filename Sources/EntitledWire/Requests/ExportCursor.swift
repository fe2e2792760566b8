/// Where the next page of an export starts: the export this server holds (`id`) and the place in its
/// copy. Written on the wire as `<id, hexadecimal>.<place>`, which clients pass back unchanged; it names an
/// export held in this server's memory, so it works on this server only, until the export is dropped.
public struct ExportCursor: Hashable, Sendable {
    public var id: UInt64
    public var place: Int

    public init(id: UInt64, place: Int) {
        self.id = id
        self.place = place
    }

    /// The cursor as written on the wire.
    public var text: String { String(id, radix: 16) + "." + String(place) }

    /// The cursor `text` spells, or `nil` when it is not one this server writes.
    public init?(text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 16, let id = UInt64(parts[0], radix: 16), let place = Int32(parts[1]), place >= 0 else {
            return nil
        }
        self.init(id: id, place: Int(place))
        // Only the spelling this server writes: "0a.096" would name the same place as another text.
        guard self.text == text else { return nil }
    }
}
