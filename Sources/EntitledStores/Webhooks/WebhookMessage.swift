import EntitledClient
import Foundation

/// One outgoing webhook: a change of the feed as a Standard Webhooks message. Its `id` is made from the
/// change, so that every try of it (after a restart, a crash, a redelivery by an admin) carries the same
/// `webhook-id` and a receiver can drop what it already has.
public struct WebhookMessage: Sendable, Hashable {
    /// `msg_<sequence>_<membership id, or the action for a change of no membership>`.
    public var id: String
    /// `membership.<action>` (`membership.grant`, `membership.renewal`, ...), `catalog.define`,
    /// `catalog.undefine` or `person.erase`.
    public var type: String
    /// The change's number: the order of the feed.
    public var sequence: UInt64
    /// What orders the messages: a message goes after every earlier one that shares a key with it, in the
    /// feed's order. Its membership, its user and its device (and the owner a transfer took it from), so
    /// that a subject's messages arrive in order even across a claim or a transfer, which change the
    /// subject. Empty for a catalog change or an erasure, which wait for every message before them and
    /// hold back every message after them.
    public var orderingKeys: [String]
    /// When the change was made (the item's `time`).
    public var time: String
    /// The payload: `{"type":...,"timestamp":...,"data":<the feed item>}`.
    public var body: [UInt8]

    /// The message of `change`.
    public init(_ change: FeedChange) {
        let entry = change.entry
        let membership = entry.membership
        switch entry.action {
        case "define", "undefine": type = "catalog." + entry.action
        case "erase": type = "person.erase"
        default: type = "membership." + entry.action
        }
        id = "msg_\(change.sequence)_" + (membership?.id ?? entry.action)
        sequence = change.sequence
        var keys: [String] = []
        if let membership {
            keys.append("membership:" + membership.id)
            if let user = membership.user { keys.append("user:" + user) }
            if let device = membership.device { keys.append("device:" + device) }
            if let former = change.formerOwner {
                if let user = former.user { keys.append("user:" + user) }
                if let device = former.device { keys.append("device:" + device) }
            }
        }
        orderingKeys = keys
        time = entry.time
        var payload: [(key: String, value: JSONValue)] = [("type", .string(type)), ("timestamp", .string(entry.time))]
        payload.append((key: "data", value: change.json))
        body = Array(JSONValue.object(payload).jsonText.utf8)
    }
}
