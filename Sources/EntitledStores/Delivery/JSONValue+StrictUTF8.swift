import EntitledClient

extension JSONValue {
    /// The JSON text in `bytes`; `nil` when they are not valid UTF-8 or not JSON. Invalid UTF-8 is refused,
    /// never replaced: two different ids must not become one.
    init?(strictUTF8 bytes: some Collection<UInt8>) {
        guard let text = String(validating: bytes, as: UTF8.self), let value = try? JSONValue(parsing: text) else { return nil }
        self = value
    }
}
