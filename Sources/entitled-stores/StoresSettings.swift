import Configuration
import EntitledClient
import EntitledConfiguration
import EntitledStores
import Foundation
import Logging

/// The receiver's settings, layered as `entitled`'s are (`LayeredSettings`, `SettingTable.stores`): the
/// command line, then the environment (`ENTITLED_STORES_*`), then the configuration file (`--config`, else
/// `ENTITLED_STORES_CONFIG`), then the defaults. Every value, wherever it came from, is checked here; a
/// refused value that the operator did not type names where it came from.
struct StoresSettings {
    static let defaultListen = "127.0.0.1:7118"
    static let defaultStateDirectory = "./entitled-stores-data"

    var listenHost = "127.0.0.1"
    var listenPort = 7118
    var entitled = ServerAddress.standard
    var token: String?
    /// The bearer token the app's backend gives `POST /purchases/...` (`--purchases-token-file`); without
    /// one, purchases are not served.
    var purchasesToken: String?
    var apple: AppleReceiver.Settings?
    /// The App Store Server API (`--apple-key-file` and its ids): imports, backfill, reconciliation.
    var appleAPI: AppStoreServerAPI.Settings?
    var google: GooglePlayReceiver.Settings?
    var stripe: StripeReceiver.Settings?
    var whop: WhopReceiver.Settings?
    var logLevel = Logger.Level.info
    var stateDirectory = StoresSettings.defaultStateDirectory
    var unmatchedRetrySeconds = 30
    /// `serve` reconciles the store memberships with the stores' APIs this often; 0: never.
    var reconcileIntervalHours = 24
    /// A membership whose access ended longer ago than this is no longer reconciled.
    var reconcileWindowDays = 30
    /// The receiver faces the internet: a connection that stops sending is closed, a request must arrive whole
    /// within `requestTimeoutSeconds` however steadily it trickles, and at most `maximumConnections` are served
    /// at once (one more is accepted, and the connection that waited longest for its request makes room), so
    /// neither slow senders nor a flood of silent connections keep the stores' deliveries out.
    var idleTimeoutSeconds = 10
    var requestTimeoutSeconds = 30
    var maximumConnections = 128
    /// `ENTITLED_STORES_*` variables that name no setting: warned about at start.
    var unknownVariables: [String] = []
    /// The endpoints the change feed is delivered to (`--webhooks FILE`); `nil` delivers none.
    var webhooks: WebhooksConfiguration?

    /// Why the settings cannot be used; the message names the option, variable or key.
    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// - Parameter commandLine: what the command line gave (`ServeCommand.configurationValues`), the first source.
    init(commandLine: [AbsoluteConfigKey: ConfigValue], environment: [String: String]) throws(Failure) {
        let layered: LayeredSettings
        do throws(SettingsError) {
            layered = try LayeredSettings(table: .stores, commandLine: commandLine, environment: environment)
        } catch {
            throw Failure(error.message)
        }
        do throws(Failure) {
            try self.init(reading: layered)
        } catch {
            // A value the operator did not type: say where it is.
            guard let explanation = layered.origins.explanation(of: error.message) else { throw error }
            throw Failure("\(error.message)\nNote: \(explanation).")
        }
    }

    private init(reading layered: LayeredSettings) throws(Failure) {
        unknownVariables = layered.environment.unknownVariables
        func text(_ name: String) -> String? { layered.text(name) }
        func secrets(_ name: String) -> [String] { layered.secrets(name) }
        func number(_ name: String, in range: ClosedRange<Int>) throws(Failure) -> Int? {
            let value: Int?
            do throws(SettingsError) {
                value = try layered.integer(name)
            } catch {
                throw Failure(error.message)
            }
            guard let value else { return nil }
            guard range.contains(value) else {
                throw Failure("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(value)")
            }
            return value
        }

        if let listen = text("listen") {
            guard let (host, port) = Self.hostAndPort(listen) else {
                throw Failure(message: "--listen must be HOST:PORT (such as 127.0.0.1:7118), not \(listen)")
            }
            listenHost = host
            listenPort = port
        }
        if let address = text("entitled") {
            guard let parsed = Self.serverAddress(address) else {
                throw Failure(message: "--entitled must be HOST:PORT, [IPv6]:PORT or unix:/path, not \(address)")
            }
            entitled = parsed
        }
        if let path = text("token-file") {
            token = try Self.secret(inFile: path, what: "token", setting: "token-file")
        }
        if let path = text("purchases-token-file") {
            purchasesToken = try Self.secret(inFile: path, what: "purchases token", setting: "purchases-token-file")
            guard purchasesToken!.utf8.count >= 16 else {
                throw Failure(message: "the purchases token of \(path) is shorter than 16 bytes: give a random one of at least 16")
            }
        }
        let googlePackage = text("google-package")
        let googleKey = text("google-service-account")
        switch (googlePackage, googleKey) {
        case (let package?, let path?):
            guard let json = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw Failure(message: "cannot read the Google service account key file \(path)")
            }
            var google = GooglePlayReceiver.Settings(
                packageName: package, serviceAccountJSON: json, pushAudience: text("google-push-audience"),
                pushEmail: text("google-push-email")
            )
            if let url = text("google-api-url") { google.apiURL = url.hasSuffix("/") ? String(url.dropLast()) : url }
            google.tokenURL = text("google-token-url")
            if let url = text("google-certs-url") { google.certificatesURL = url }
            self.google = google
        case (nil, nil):
            break
        case (nil, _):
            throw Failure(message: "--google-service-account needs --google-package: the app whose notifications are accepted")
        case (_, nil):
            throw Failure(message: "--google-package needs --google-service-account: the key that reads purchases from the Play Developer API")
        }
        let whopSecrets = secrets("whop-secret")
        if !whopSecrets.isEmpty {
            var whop = WhopReceiver.Settings(secrets: whopSecrets)
            whop.userMetadataKey = text("whop-user-key") ?? whop.userMetadataKey
            self.whop = whop
        }
        let stripeSecrets = secrets("stripe-secret")
        // The webhook's secrets serve `/stripe`; an API key alone is enough for imports, backfill and
        // reconciliation, which read from Stripe's API.
        if !stripeSecrets.isEmpty || text("stripe-api-key-file") != nil {
            var stripe = StripeReceiver.Settings(secrets: stripeSecrets)
            stripe.userMetadataKey = text("stripe-user-key") ?? stripe.userMetadataKey
            stripe.gracePeriodDays = try number("stripe-grace-days", in: 0...365) ?? stripe.gracePeriodDays
            if let path = text("stripe-api-key-file") {
                stripe.apiKey = try Self.secret(inFile: path, what: "Stripe API key", setting: "stripe-api-key-file")
            }
            if let url = text("stripe-api-url") { stripe.apiURL = url.hasSuffix("/") ? String(url.dropLast()) : url }
            self.stripe = stripe
        }
        let appleRoot = text("apple-root-ca")
        let appleBundle = text("apple-bundle-id")
        switch (appleRoot, appleBundle) {
        case (let path?, let bundle?):
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw Failure(message: "cannot read the App Store root certificate file \(path)")
            }
            apple = AppleReceiver.Settings(
                rootCertificatesPEM: pem, bundleID: bundle, appAppleID: try number("apple-app-id", in: 1...Int.max)
            )
            if let keyFile = text("apple-key-file") {
                guard let key = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
                    throw Failure(message: "cannot read the App Store Server API key file \(keyFile) (--apple-key-file)")
                }
                guard let keyID = text("apple-key-id"), let issuerID = text("apple-issuer-id") else {
                    throw Failure(message: "--apple-key-file needs --apple-key-id and --apple-issuer-id: App Store Connect shows both beside the key")
                }
                var api = AppStoreServerAPI.Settings(privateKeyPEM: key, keyID: keyID, issuerID: issuerID, bundleID: bundle, rootCertificatesPEM: pem)
                if let url = text("apple-api-url") { api.productionURL = url.hasSuffix("/") ? String(url.dropLast()) : url }
                if let url = text("apple-sandbox-api-url") { api.sandboxURL = url == "none" ? nil : (url.hasSuffix("/") ? String(url.dropLast()) : url) }
                appleAPI = api
            }
        case (nil, nil):
            if text("apple-key-file") != nil {
                throw Failure(message: "--apple-key-file needs --apple-root-ca and --apple-bundle-id: the API's signed answers are checked as the notifications are")
            }
        case (nil, _):
            throw Failure(message: "--apple-bundle-id needs --apple-root-ca: the root certificate the notifications must lead to")
        case (_, nil):
            throw Failure(message: "--apple-root-ca needs --apple-bundle-id: the app whose notifications are accepted")
        }
        stateDirectory = text("state-dir") ?? stateDirectory
        unmatchedRetrySeconds = try number("unmatched-retry-seconds", in: 1...86_400) ?? unmatchedRetrySeconds
        reconcileIntervalHours = try number("reconcile-interval-hours", in: 0...8_760) ?? reconcileIntervalHours
        reconcileWindowDays = try number("reconcile-window-days", in: 0...3_650) ?? reconcileWindowDays
        idleTimeoutSeconds = try number("idle-timeout", in: 1...3_600) ?? idleTimeoutSeconds
        requestTimeoutSeconds = try number("request-timeout", in: 1...3_600) ?? requestTimeoutSeconds
        maximumConnections = try number("max-connections", in: 1...100_000) ?? maximumConnections
        if let level = text("log-level") {
            guard let parsed = Logger.Level(rawValue: level) else {
                throw Failure(message: "--log-level must be trace, debug, info, notice, warning, error or critical, not \(level)")
            }
            logLevel = parsed
        }
        if let path = text("webhooks") {
            do throws(WebhooksConfigurationError) {
                webhooks = try WebhooksConfiguration.read(path: path)
            } catch {
                throw Failure(message: error.message)
            }
        }
    }

    /// The stores served, for the start log.
    var storesOn: [String] {
        (apple == nil ? [] : ["apple"]) + (google == nil ? [] : ["google"]) + (stripe?.secrets.isEmpty ?? true ? [] : ["stripe"]) + (whop == nil ? [] : ["whop"])
    }

    static func hostAndPort(_ text: String) -> (String, Int)? {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        return (String(host), port)
    }

    static func serverAddress(_ text: String) -> ServerAddress? {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            return path.isEmpty ? nil : .unixSocket(path: path)
        }
        if text.hasPrefix("/") { return .unixSocket(path: text) }
        return hostAndPort(text).map { .tcp(host: $0.0, port: $0.1) }
    }
}

extension StoresSettings.Failure {
    init(_ message: String) { self.message = message }
}

extension StoresSettings {
    /// The first line of the file at `path`, trimmed (`TokenFile`): a secret kept out of the command line
    /// and the environment, which other users can see.
    static func secret(inFile path: String, what: String, setting: String) throws(Failure) -> String {
        do throws(TokenFile.Failure) {
            return try TokenFile.readToken(atPath: path, what: what)
        } catch {
            throw Failure(message: "\(error.message) (--\(setting))")
        }
    }
}

extension StoresSettings {
    /// A pool of connections to the `entitled` of these settings, authenticated with their token.
    /// - Parameters:
    ///   - connections: 2 for the receiver and the reconciliation, more for an import's concurrency.
    ///   - requestTimeout: how long a request may wait for its answer.
    func entitledPool(connections: Int, requestTimeout: Duration = .seconds(30)) -> EntitledPool {
        EntitledPool(
            address: entitled,
            configuration: EntitledPool.Configuration(connections: connections, requestTimeout: requestTimeout, connectTimeout: .seconds(5), token: token)
        )
    }
}
