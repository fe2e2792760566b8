/// Whose access a request is about: an app user, a device, or both (a logged-in user on a device).
///
/// What a subject sees (`EntitlementStore.memberships(visibleTo:)`): for a user, the memberships the user
/// owns; for a device, the memberships bought on that device that no user has claimed; for both, the union.
public struct Subject: Hashable, Sendable {
    /// The app user id, if any.
    public let user: String?
    /// The device id, if any.
    public let device: String?

    /// A subject with at least one of `user` and `device`; `nil` when both are missing.
    public init?(user: String?, device: String?) {
        guard user != nil || device != nil else { return nil }
        self.user = user
        self.device = device
    }

    public static func user(_ id: String) -> Subject { Subject(user: id, device: nil)! }
    public static func device(_ id: String) -> Subject { Subject(user: nil, device: id)! }
    public static func user(_ user: String, device: String) -> Subject { Subject(user: user, device: device)! }
}

extension Subject: CustomStringConvertible {
    /// `user "u1"`, `device "d1"` or `user "u1" with device "d1"`: for messages.
    public var description: String {
        switch (user, device) {
        case (let user?, let device?): return "user \"\(user)\" with device \"\(device)\""
        case (let user?, nil): return "user \"\(user)\""
        case (nil, let device?): return "device \"\(device)\""
        case (nil, nil): return "nobody"
        }
    }
}
