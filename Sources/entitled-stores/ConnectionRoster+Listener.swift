import HummingbirdCore

/// The roster as Hummingbird's listener limit: the listener counts accepted and closed connections through it,
/// and stops accepting while it says so (`AvailableConnectionsChannelHandler`, on the server channel's loop).
extension ConnectionRoster: AvailableConnectionsDelegate {
    func connectionOpened() { opened() }

    func connectionClosed() { closed() }

    func isAcceptingNewConnections() -> Bool { isAccepting }
}
