/// A store API client's settings that cannot work: a key that is not a key, a certificate file that holds
/// no certificate. Found when the client is made, before any call.
public struct StoreAPISettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
