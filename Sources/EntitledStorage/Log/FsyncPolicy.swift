/// When the log is forced to disk, and so what a crash can lose.
public enum FsyncPolicy: String, Sendable, CaseIterable {
    /// Every write is on disk (`fdatasync`) before it is acknowledged. Writes that arrive while a sync is
    /// running share the next one (group commit). A crash of the process or of the machine loses nothing
    /// that was acknowledged.
    case always
    /// Writes are handed to the operating system before they are acknowledged and synced once a second.
    /// A crash of the process loses nothing acknowledged; a crash of the machine (power, kernel) can lose
    /// about the last second.
    case everysec
    /// Writes are handed to the operating system before they are acknowledged and never synced by the
    /// server. A crash of the process loses nothing acknowledged; a crash of the machine can lose whatever
    /// the operating system had not written yet (on Linux typically up to 30 seconds).
    case no
}
