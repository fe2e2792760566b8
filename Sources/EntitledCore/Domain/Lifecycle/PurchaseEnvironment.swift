/// Where a purchase was made: a real one, or a store's test environment.
public enum PurchaseEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox
}
