/// A request to create a membership, before the store gives it an id and a creation time.
public struct Grant: Sendable {
    /// Who gets it: a user (owned by the user), a device (a guest purchase) or both (bought on the device
    /// while logged in: owned by the user).
    public var subject: Subject
    public var productId: String
    public var planId: String?
    public var source: PurchaseSource
    public var expiry: Expiry

    public init(
        subject: Subject,
        productId: String,
        planId: String? = nil,
        source: PurchaseSource = .default,
        expiry: Expiry = .lifetime
    ) {
        self.subject = subject
        self.productId = productId
        self.planId = planId
        self.source = source
        self.expiry = expiry
    }

    /// When a granted membership ends.
    public enum Expiry: Hashable, Sendable {
        case lifetime
        /// At a fixed time (which may already have passed, for importing history).
        case at(Timestamp)
        /// This long after the membership's creation.
        case after(TimeSpan)
    }
}
