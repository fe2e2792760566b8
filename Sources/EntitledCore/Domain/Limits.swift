/// Size limits of the domain, enforced where input enters (the wire codec) and documented in PROTOCOL.md.
public enum Limits {
    /// The longest user, device, product, plan, entitlement or membership id, in UTF-8 bytes.
    public static let maximumIdentifierBytes = 256
    /// The most products one entitlement may list.
    public static let maximumProductsPerEntitlement = 1000
    /// The longest revocation reason, in UTF-8 bytes.
    public static let maximumReasonBytes = 256
}
