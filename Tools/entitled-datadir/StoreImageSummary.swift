import EntitledCore
import EntitledStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A data directory's whole state, read as a starting server reads it.
struct StoreImageSummary {
    var image: StoreImage
    var sequence: UInt64 { image.sequence }
    var memberships: Int { image.memberships.count - image.erasedMembershipCount }

    /// Opens the directory (its lock refuses while a server runs on it), takes the image and closes it.
    static func read(directory: String) throws(StorageError) -> StoreImageSummary {
        // Opening would create a missing directory: a typo must not copy an empty store.
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .brokenHistory("\(directory) is not a data directory (no such directory)")
        }
        let durable = try DurableStore(directory: directory)
        defer { durable.close() }
        return StoreImageSummary(image: durable.store.image())
    }
}
