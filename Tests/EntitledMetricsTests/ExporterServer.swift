import EntitledCore
import EntitledMetrics
import EntitledServer
import EntitledStorage
import EntitledTestSupport
import Logging

/// An in-process `EntitledServer` on a free loopback port with a `PrometheusExporter` over it: on a
/// `DurableStore` in a temporary data directory, or on memory alone, as `entitled` runs with or without
/// `--data-dir`.
struct ExporterServer {
    let server: EntitledServer
    let exporter: PrometheusExporter
    let port: Int
    let directory: TemporaryDirectory

    enum Storage { case dataDirectory, memoryOnly }

    static func with<Result>(_ storage: Storage, _ body: (ExporterServer) async throws -> Result) async throws -> Result {
        let directory = try TemporaryDirectory()
        var logger = Logger(label: "entitled-metrics-test")
        logger.logLevel = .warning
        let processor: RequestProcessor = switch storage {
        case .dataDirectory: RequestProcessor(durable: try DurableStore(directory: directory.path + "/data", policy: .always))
        case .memoryOnly: RequestProcessor(store: EntitlementStore())
        }
        let server = EntitledServer(processor: processor, configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0)), logger: logger)
        let port = try await server.start().first?.port ?? 0
        let running = ExporterServer(server: server, exporter: PrometheusExporter(server: server), port: port, directory: directory)
        do {
            let result = try await body(running)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// The exposition text of one scrape.
    func scrape() -> String {
        String(decoding: exporter.scrape(), as: UTF8.self)
    }
}

/// The metric families an exposition declares (`# TYPE name type`), by name.
func declaredFamilies(in text: String) -> [String: String] {
    var families: [String: String] = [:]
    for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
        let words = line.split(separator: " ")
        if words.count == 4 { families[String(words[2])] = String(words[3]) }
    }
    return families
}
