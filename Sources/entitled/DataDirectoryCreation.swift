// FoundationEssentials, not Foundation (see EntitledConfiguration's SettingsFile.swift): only `FileManager.removeItem` is needed.
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What opening the data directory is about to create, so that a start that then fails (a port in use)
/// can take it away again: a failed start leaves behind no directory it made, and never touches one that
/// was there before.
struct DataDirectoryCreation: Sendable {
    /// The outermost directory of the path that does not exist yet (the data directory itself, or a parent
    /// that `DurableStore` creates on the way); `nil` when the data directory already exists.
    let createdRoot: String?

    /// Looks at `path` before the data directory is opened.
    init(path: String) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        var missing: String?
        for component in path.split(separator: "/") {
            prefix += component
            var status = stat()
            if lstat(prefix, &status) != 0, errno == ENOENT {
                missing = prefix
                break
            }
            prefix += "/"
        }
        createdRoot = missing
    }

    /// Removes what the start created, with what the server wrote in it (its lock file, an empty log):
    /// nothing there was ever acknowledged to a client, since the server never served.
    func undo() {
        guard let createdRoot else { return }
        try? FileManager.default.removeItem(atPath: createdRoot)
    }
}
