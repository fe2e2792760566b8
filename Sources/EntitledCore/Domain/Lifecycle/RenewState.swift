/// What will happen when the current period ends (Qonversion's `renewState`). Derived from the
/// membership's lifecycle, never stored, so it cannot disagree with the fields it summarizes.
public enum RenewState: String, Sendable, CaseIterable {
    /// It renews automatically.
    case willRenew = "will_renew"
    /// It does not renew and was never cancelled: a lifetime purchase, a consumable, a fixed grant.
    case nonRenewable = "non_renewable"
    /// The store could not charge for the renewal; access continues during a grace period, if any.
    case billingIssue = "billing_issue"
    /// The customer turned renewal off; access continues until it expires.
    case canceled
}
