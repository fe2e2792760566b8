/// Which kind of period a subscription is in (RevenueCat's `periodType`).
public enum PeriodType: String, Sendable, CaseIterable {
    /// A paid period at the regular price.
    case normal
    /// A free trial: the membership is `trialing` until it converts (a renewal) or expires.
    case trial
    /// An introductory price.
    case intro
    /// Granted by a promotion.
    case promotional
}
