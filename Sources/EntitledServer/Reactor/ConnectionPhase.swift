/// Where a `ServedConnection` is between accept and close. One value rather than a flag each, so that
/// no combination the connection cannot be in (closing and reading, lingering and paused) can be written.
/// No case carries a value: a phase is one byte, compared on every event and line of the check path.
enum ConnectionPhase {
    /// Its socket is read and its requests answered.
    case reading
    /// Not read for now: too many answers wait for a client that does not read them (until they fall
    /// below `ServedConnection.lowWaterMark`), or a request is parked until it may be answered. Lines
    /// already read are still answered when they may be.
    case paused
    /// Reads nothing more (the client closed its side, or sent a line over the limit) and closes once
    /// every answer is written.
    case closingWhenAnswered
    /// Reads nothing more (a graceful stop) and, once every answer is written, lingers rather than
    /// closes: see `lingering`.
    case lingeringWhenAnswered
    /// Its write side is shut: what the client still sends is read and dropped until it closes, for at
    /// most `ServedConnection.lingerMilliseconds` (`ServedConnection.linger`).
    case lingering
    /// Its socket is closed.
    case closed

    /// Whether requests are still read from it and answered (now, or once it reads again).
    var takesRequests: Bool {
        switch self {
        case .reading, .paused: true
        case .closingWhenAnswered, .lingeringWhenAnswered, .lingering, .closed: false
        }
    }
}
