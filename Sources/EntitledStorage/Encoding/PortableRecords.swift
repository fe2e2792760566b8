import EntitledCore

/// The data directory's binary formats, for a system of record that is not a data directory: cluster mode
/// keeps each change as one log record payload and each snapshot as one snapshot file's bytes in
/// PostgreSQL, so that a change means exactly the same there as on disk, and a database can be copied
/// into a data directory and back without translating anything (Protocol/STORAGE.md, CLUSTER.md).
public enum PortableRecords {
    /// The record format version `encodeChange` writes; `decodeChange` reads 1 to this.
    public static let changeFormatVersion: UInt32 = LogFormat.version

    /// A change as a log record's payload (without the record frame: the database checks its own pages).
    public static func encodeChange(_ change: StoreChange, context: ChangeContext, sequence: UInt64) -> [UInt8] {
        var writer = BinaryWriter(capacity: 256)
        writer.writeChange(change, sequence: sequence, context: context)
        return writer.bytes
    }

    /// Reads a payload `encodeChange` wrote (in format `version`); `name` names it in errors.
    public static func decodeChange(
        _ bytes: [UInt8], version: UInt32 = changeFormatVersion, name: String
    ) throws(StorageError) -> (sequence: UInt64, change: StoreChange, context: ChangeContext) {
        try bytes.withBytes { (raw) throws(StorageError) -> (sequence: UInt64, change: StoreChange, context: ChangeContext) in
            var reader = BinaryReader(raw)
            do throws(BinaryReader.Malformed) {
                let logged = try reader.readLoggedChange(version: version)
                guard reader.remaining == 0 else {
                    throw BinaryReader.Malformed(offset: reader.offset, problem: "\(reader.remaining) bytes follow the change")
                }
                return (logged.sequence, logged.change, logged.context)
            } catch {
                throw .corruptLog(file: name, offset: error.offset, problem: error.problem)
            }
        }
    }

    /// A snapshot of `image` (which holds no erased membership: `StoreImage.withoutErasedMemberships()`),
    /// byte for byte the file a data directory would hold.
    public static func encodeSnapshot(_ image: StoreImage) -> [UInt8] {
        SnapshotFile.encode(image)
    }

    /// Reads and checks snapshot bytes; `name` names them in errors.
    public static func decodeSnapshot(_ bytes: [UInt8], name: String) throws(StorageError) -> StoreImage {
        try SnapshotFile.decode(bytes, name: name)
    }
}
