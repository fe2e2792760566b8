import NIOCore

/// How the ready line names the bound addresses: `tcp 127.0.0.1:7117, unix /run/entitled.sock`.
enum ReadyLine {
    static func describe(_ addresses: [SocketAddress]) -> String {
        addresses.map(describe).joined(separator: ", ")
    }

    static func describe(_ address: SocketAddress) -> String {
        switch address {
        case .v4:
            return "tcp \(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6:
            return "tcp [\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket:
            return "unix \(address.pathname ?? "?")"
        }
    }
}
