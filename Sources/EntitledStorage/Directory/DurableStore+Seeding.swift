import EntitledCore

extension DurableStore {
    /// Makes `directory` a data directory holding exactly `image`: one snapshot, no log. For copying a
    /// store kept elsewhere (cluster mode's database) into a data directory that a standalone server can
    /// start from. The image's erased memberships are left out, as every snapshot leaves them out.
    /// - Throws: `StorageError.io` when the directory cannot be made or written, and
    ///   `.brokenHistory` when it already holds files (nothing is overwritten).
    public static func seed(directory: String, with image: StoreImage) throws(StorageError) -> (file: String, bytes: Int) {
        try FileSystem.makeDirectory(directory)
        let existing = try FileSystem.listDirectory(directory).filter { $0 != "." && $0 != ".." }
        guard existing.isEmpty else {
            throw .brokenHistory("\(directory) is not empty (it holds \(existing.sorted().prefix(3).joined(separator: ", "))); choose an empty or new directory")
        }
        let lock = try DirectoryLock(directory: directory)
        defer { lock.release() }
        return try SnapshotFile.write(image.withoutErasedMemberships(), to: directory)
    }
}
