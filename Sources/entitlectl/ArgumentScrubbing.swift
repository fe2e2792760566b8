#if canImport(Glibc)
import Glibc
#endif

/// Hides a token given on the command line from other users of the machine.
///
/// Every user can read a process's arguments (`ps`, `/proc/PID/cmdline`). On Linux those show the very
/// memory `CommandLine.unsafeArgv` points at, so writing over the token there hides it from then on. It
/// is visible in the moment before this runs, which is why `--token-file` and `ENTITLED_TOKEN` are the
/// recommended ways; this narrows the window for those who use `--token` anyway.
enum ArgumentScrubbing {
    /// Overwrites with `x` the value of each `--token VALUE` and `--token=VALUE` in the process's
    /// arguments, keeping their lengths (the arguments cannot move).
    ///
    /// Call it only after the arguments were parsed: `CommandLine.arguments`, which the parser reads, is
    /// a copy made on first use, and must hold the token before it is overwritten here. For the same
    /// reason a `--token` among the command's own words (after the options) may be overwritten too
    /// without harm: those words were copied already.
    static func overwriteTokenArguments() {
        let count = Int(CommandLine.argc)
        let arguments = CommandLine.unsafeArgv
        var index = 1
        while index < count {
            guard let argument = arguments[index] else { break }
            if strcmp(argument, "--token") == 0 {
                if index + 1 < count, let value = arguments[index + 1] { overwrite(value, from: 0) }
                index += 2
                continue
            }
            let prefix = "--token="
            if strncmp(argument, prefix, prefix.utf8.count) == 0 { overwrite(argument, from: prefix.utf8.count) }
            index += 1
        }
    }

    private static func overwrite(_ argument: UnsafeMutablePointer<CChar>, from start: Int) {
        let length = strlen(argument)
        guard length > start else { return }
        memset(argument + start, Int32(UInt8(ascii: "x")), length - start)
    }
}
