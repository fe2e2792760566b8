#if canImport(Glibc)
import Glibc
#endif

/// The environment variables the console reads.
struct Environment {
    subscript(name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// `ENTITLECTL_HISTFILE`, else `~/.entitlectl_history`; `nil` (no history file) for `/dev/null` or
    /// when there is no home directory.
    var historyPath: String? {
        let path = self["ENTITLECTL_HISTFILE"] ?? self["HOME"].map { $0 + "/.entitlectl_history" }
        guard let path, !path.isEmpty, path != "/dev/null" else { return nil }
        return path
    }
}
