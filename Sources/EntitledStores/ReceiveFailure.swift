/// Why a notification was not answered with success: refused (4xx, the store should not retry as is) or
/// not applied because `entitled` could not take it (503, the store retries).
public enum ReceiveFailure: Error, Hashable, Sendable {
    case refused(NotificationRefusal)
    case unavailable(EntitledUnavailable)
}
