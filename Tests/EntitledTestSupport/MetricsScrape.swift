import Foundation

/// Reading `entitled`'s Prometheus endpoint (`--metrics-port`) as a scraper does: one HTTP/1.1 request on
/// a fresh connection, its samples by name.
public enum MetricsScrape {
    /// The samples of a Prometheus text body, by name with labels.
    public static func samples(_ body: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in body.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// One HTTP/1.1 request over a fresh connection, `Connection: close`: status, header block, body.
    public static func get(_ path: String, port: Int, method: String = "GET") async throws -> (status: Int, headers: String, body: String) {
        let response = try await exchange("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: port)
        let parts = response.components(separatedBy: "\r\n\r\n")
        let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// Sends `request` and reads until the server closes (or 5 s pass without a byte).
    public static func exchange(_ request: String, port: Int) async throws -> String {
        try await onDedicatedThread {
            let socket = try RawSocket(port: port, timeoutSeconds: 5)
            try socket.send(request)
            socket.closeSending()
            var text = ""
            while let line = try? socket.readLine() {
                text += line + "\n"
            }
            return text
        }
    }
}
