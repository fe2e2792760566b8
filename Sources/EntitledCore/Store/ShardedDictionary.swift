/// A dictionary split into 64 shards by the key's hash, so that a copy is cheap to keep, as
/// `MembershipTable` is for memberships.
///
/// A snapshot holds on to the store's idempotency keys and revisions while writes go on. With one
/// dictionary, the first write after the snapshot copied all of it under the store's write lock (a
/// million keys: tens of milliseconds during which no check is answered); here it copies one shard and
/// the list of 64.
public struct ShardedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable, Sequence {
    static var shardCount: Int { 64 }

    private var shards: [[Key: Value]] = Array(repeating: [:], count: 64)
    public private(set) var count = 0

    public init() {}

    @inline(__always)
    private static func shard(of key: Key) -> Int {
        key.hashValue & (shardCount - 1)
    }

    public var isEmpty: Bool { count == 0 }

    public subscript(key: Key) -> Value? {
        get { shards[Self.shard(of: key)][key] }
        set {
            let shard = Self.shard(of: key)
            if let newValue {
                if shards[shard].updateValue(newValue, forKey: key) == nil { count += 1 }
            } else if shards[shard].removeValue(forKey: key) != nil {
                count -= 1
            }
        }
    }

    /// Changes the value of `key` in place (`defaultValue` when it has none).
    public mutating func modify<Result>(_ key: Key, default defaultValue: @autoclosure () -> Value, _ body: (inout Value) -> Result) -> Result {
        let shard = Self.shard(of: key)
        if shards[shard][key] == nil { count += 1 }
        return body(&shards[shard][key, default: defaultValue()])
    }

    /// Removes every entry that satisfies `shouldRemove` (an erasure's idempotency keys).
    ///
    /// Each shard is read first and written only if it has entries to remove, one `removeValue` each: a
    /// shard with none stays as it is, still shared with a snapshot that holds it, rather than being
    /// rebuilt (a copy of every key under the store's write lock).
    public mutating func removeAll(where shouldRemove: (Key, Value) -> Bool) {
        for shard in shards.indices {
            let doomed = shards[shard].compactMap { shouldRemove($0.key, $0.value) ? $0.key : nil }
            for key in doomed { shards[shard].removeValue(forKey: key) }
            count -= doomed.count
        }
    }

    /// The values, in no particular order.
    public var values: [Value] { shards.flatMap(\.values) }

    public func makeIterator() -> some IteratorProtocol<(key: Key, value: Value)> {
        shards.lazy.flatMap { $0.lazy.map { (key: $0.key, value: $0.value) } }.makeIterator()
    }
}
