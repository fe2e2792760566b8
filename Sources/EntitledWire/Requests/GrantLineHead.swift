/// What a `grant` line written the usual way shows before it is decoded: `RequestDecoder` reads grants;
/// this only looks at how the line starts, for a prefetch.
public enum GrantLineHead {
    /// `op` first, then `user`, as a bulk import or an app's backend writes a grant.
    private static let headOfUserGrant: StaticString = #"{"op":"grant","user":""#

    /// The bytes of the user id that the grant on `line` names, when the line starts `{"op":"grant","user":"`:
    /// a look for a prefetch (`EntitlementStore.prefetchingUsers`: a grant inserts into the same entry of
    /// the user index that a check of the user reads), not a decode. It may give bytes of a line that
    /// `RequestDecoder` later refuses; what it gives decides nothing.
    @inline(__always)
    public static func user(onLine line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        CompactLine.stringValue(onLine: line, startingWith: headOfUserGrant)
    }
}
