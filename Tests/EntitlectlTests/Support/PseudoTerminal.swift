import EntitledTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program running on a real pseudo-terminal, driven the way a person would: keys are written to the
/// terminal's master side, and everything the program draws is read back from it.
///
/// libedit redraws incrementally (cursor moves, erases), so tests match on fragments of the output, not on
/// a rendered screen.
final class PseudoTerminal {
    private let master: Int32
    private let process = Process()
    private var output: [UInt8] = []
    /// Where the last `waitFor` matched; later waits look only after it.
    private var consumed = 0

    /// Starts `executable` with its standard input, output and error on a new pseudo-terminal 200 columns
    /// wide, so lines do not wrap; in `currentDirectory` when given (where a relative path it writes goes),
    /// else in the test runner's.
    init(executable: URL, arguments: [String], environment: [String: String], currentDirectory: String? = nil) throws {
        // posix_openpt, grantpt, unlockpt and ptsname are hidden from Swift's Glibc module (they need
        // _XOPEN_SOURCE), so this is what they do on Linux: open the multiplexer, unlock, ask the number.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.getNumber, &number) == 0 else {
            throw TestSupportFailure(description: "cannot open a pseudo-terminal: errno \(errno)")
        }
        let name = "/dev/pts/\(number)"
        let slave = open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw TestSupportFailure(description: "cannot open \(name): errno \(errno)") }
        var size = winsize(ws_row: 40, ws_col: 200, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(slave, UInt(TIOCSWINSZ), &size)
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        try process.run()
        let flags = fcntl(master, F_GETFL)
        _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
    }

    /// The program's process id, for looking at it from outside (`/proc/PID/...`) while it runs.
    var processIdentifier: Int32 { process.processIdentifier }

    /// Everything the program has drawn so far (read up to the last wait), without escape sequences.
    var transcript: String { String(decoding: Self.visibleText(output), as: UTF8.self) }

    /// TIOCSPTLCK and TIOCGPTN from <asm-generic/ioctls.h>, which Swift does not import (function-like macros).
    private static let setLock: UInt = 0x4004_5431
    private static let getNumber: UInt = 0x8004_5430

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        close(master)
    }

    /// Types `text` (may contain control characters such as "\t" for Tab or "\u{1B}[A" for the up arrow).
    func type(_ text: String) throws {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw TestSupportFailure(description: "write to the terminal failed: errno \(errno)") }
    }

    /// Waits until the program has drawn `fragment` (after the previous match) and returns the text
    /// drawn up to and including it.
    ///
    /// The match is on the drawn text without escape sequences and carriage returns: with a right prompt
    /// showing, libedit positions the cursor before every character it echoes (`\r ESC[24G u \r ESC[25G s`),
    /// so typed words only read as words once the positioning is taken out.
    /// The default timeout is generous: a console started on a machine busy with the whole suite may be slow
    /// to draw, and the wait ends as soon as the fragment is there.
    @discardableResult
    func waitFor(_ fragment: String, timeout: Duration = .seconds(30)) throws -> String {
        let needle = Array(fragment.utf8)
        let deadline = ContinuousClock.now + timeout
        while true {
            let visible = Self.visibleText(output)
            if consumed <= visible.count, let range = visible[consumed...].firstRange(of: needle) {
                let drawn = String(decoding: visible[consumed..<range.upperBound], as: UTF8.self)
                consumed = range.upperBound
                return drawn
            }
            guard ContinuousClock.now < deadline else {
                throw TestSupportFailure(
                    description: "the terminal never showed \(fragment.debugDescription); it showed: \(String(decoding: visible[min(consumed, visible.count)...], as: UTF8.self).debugDescription)"
                )
            }
            readAvailable(waitingMilliseconds: 50)
        }
    }

    /// The output without ANSI escape sequences (ESC [ ... final byte, or ESC and one byte), carriage
    /// returns and bells.
    static func visibleText(_ bytes: [UInt8]) -> [UInt8] {
        var visible: [UInt8] = []
        visible.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "[") {
                    index += 1
                    while index < bytes.count, !(0x40...0x7E).contains(bytes[index]) { index += 1 }
                }
                index += 1
                continue
            }
            if byte != UInt8(ascii: "\r") && byte != 0x07 { visible.append(byte) }
            index += 1
        }
        return visible
    }

    /// Waits for the program to exit (after it was told to quit) and returns its exit status.
    func waitForExit(timeout: Duration = .seconds(30)) throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                let visible = Self.visibleText(output)
                throw TestSupportFailure(
                    description: "the program did not exit; the terminal last showed: \(String(decoding: visible.suffix(300), as: UTF8.self).debugDescription)"
                )
            }
            readAvailable(waitingMilliseconds: 20)
        }
        return process.terminationStatus
    }

    private func readAvailable(waitingMilliseconds: Int32) {
        var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, waitingMilliseconds) > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
        if count > 0 { output.append(contentsOf: chunk[..<count]) }
    }
}
