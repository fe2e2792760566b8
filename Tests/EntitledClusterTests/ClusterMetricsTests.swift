import EntitledTestSupport
import Foundation
import Testing

extension ClusterTests {
    /// A node's Prometheus endpoint carries its replica's state.
    @Suite("Cluster metrics")
    struct Metrics {
        @Test func aNodesMetricsShowItsConnectionLagAndCommits() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let node = try ClusterNode(name: "metered", url: url, arguments: ["--metrics-port", "0"])
            let other = try ClusterNode(name: "writer", url: url)
            try node.ok(#"{"op":"grant","user":"m1","product":"p1"}"#)
            let grant = try other.ok(#"{"op":"grant","user":"m2","product":"p1"}"#)
            try node.ok(#"{"op":"check","user":"m2","minSeq":\#(grant.sequence ?? 0)}"#)
            let ready = try #require(node.process?.readyLine)
            let afterHost = try #require(ready.range(of: "metrics http://127.0.0.1:")).upperBound
            let port = try #require(Int(ready[afterHost...].prefix { $0.isNumber }))
            let body = try httpGet("/metrics", port: port)
            for expected in [
                "entitled_replication_connected 1", "entitled_replication_writable 1", "entitled_replication_lag_changes 0",
                "entitled_replication_groups_committed_total 1", "entitled_replication_changes_replicated_total 1",
            ] {
                #expect(body.contains(expected), "missing \(expected) in:\n\(body.split(separator: "\n").filter { $0.contains("replication") }.joined(separator: "\n"))")
            }
        }
    }
}

/// A plain HTTP/1.1 GET on 127.0.0.1, read until the server closes.
func httpGet(_ path: String, port: Int) throws -> String {
    let descriptor = try LoopbackSocket.connect(port: port)
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    return String(decoding: response, as: UTF8.self)
}
