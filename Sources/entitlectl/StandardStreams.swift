import CLibEdit

#if canImport(Glibc)
import Glibc
#endif

/// Writing to standard output and standard error through C's stdio, which `print` and libedit also use,
/// so their output interleaves in order.
enum StandardStreams {
    /// Writes `text` to standard output and flushes it.
    static func output(_ text: String) {
        fputs(text, entitled_standard_output())
        fflush(entitled_standard_output())
    }

    /// Writes `text` to standard error, after flushing standard output so the two appear in order.
    static func error(_ text: String) {
        fflush(entitled_standard_output())
        fputs(text, entitled_standard_error())
    }
}
