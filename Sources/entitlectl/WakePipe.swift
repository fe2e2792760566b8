#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose only message is "look now": the connection's event loop writes a byte when a pushed line
/// arrives, and the line editor, waiting for a key, polls the read end along with the terminal.
final class WakePipe: Sendable {
    let readDescriptor: Int32
    let writeDescriptor: Int32

    /// `nil` when the system refuses a pipe (out of descriptors): pushes are then shown at the next prompt.
    init?() {
        var descriptors: [Int32] = [-1, -1]
        // pipe2 is hidden from Swift's Glibc module (it needs _GNU_SOURCE): pipe, then the flags.
        guard pipe(&descriptors) == 0 else { return nil }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Writes one byte; a full pipe already holds a wake-up, so a failed write loses nothing.
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }
}
