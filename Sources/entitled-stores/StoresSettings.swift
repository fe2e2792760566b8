import EntitledClient
import EntitledStores
import Foundation
import Logging

/// The receiver's settings, from the command line, then the environment (`ENTITLED_STORES_*`), then the
/// configuration file, then the defaults.
struct StoresSettings {
    static let defaultListen = "127.0.0.1:7118"
    static let defaultStateDirectory = "./entitled-stores-data"
    /// The keys of the file and the variables, as the long options name them.
    static let keys: Set<String> = [
        "listen", "entitled", "token-file", "apple-root-ca", "apple-bundle-id", "apple-app-id", "google-package", "google-service-account",
        "google-push-audience", "google-push-email", "google-api-url", "google-token-url", "google-certs-url", "stripe-secret", "stripe-user-key",
        "stripe-grace-days", "whop-secret", "whop-user-key", "state-dir", "unmatched-retry-seconds", "log-level", "idle-timeout",
        "max-connections",
    ]

    var listenHost = "127.0.0.1"
    var listenPort = 7118
    var entitled = ServerAddress.standard
    var token: String?
    var apple: AppleReceiver.Settings?
    var google: GooglePlayReceiver.Settings?
    var stripe: StripeReceiver.Settings?
    var whop: WhopReceiver.Settings?
    var logLevel = Logger.Level.info
    var stateDirectory = StoresSettings.defaultStateDirectory
    var unmatchedRetrySeconds = 30
    /// The receiver faces the internet: a connection that stops sending is closed, and at most this many are
    /// served at once, so neither slow senders nor a flood of silent connections hold the process.
    var idleTimeoutSeconds = 10
    var maximumConnections = 128
    /// `ENTITLED_STORES_*` variables that name no setting: warned about at start.
    var unknownVariables: [String] = []

    /// Why the settings cannot be used; the message names the option, variable or key.
    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    init(command: ServeCommand, environment: [String: String]) throws(Failure) {
        let file = try Self.readFile(command.config ?? environment["ENTITLED_STORES_CONFIG"])
        var unknown: [String] = []
        for name in environment.keys where name.hasPrefix("ENTITLED_STORES_") && name != "ENTITLED_STORES_CONFIG" {
            let key = name.dropFirst("ENTITLED_STORES_".count).lowercased().replacingOccurrences(of: "_", with: "-")
            if !Self.keys.contains(key) { unknown.append(name) }
        }
        unknownVariables = unknown.sorted()
        func variable(_ key: String) -> String? {
            environment["ENTITLED_STORES_" + key.uppercased().replacingOccurrences(of: "-", with: "_")].flatMap { $0.isEmpty ? nil : $0 }
        }
        /// A text setting: the command line's, the environment's, the file's.
        func text(_ key: String, _ given: String?) throws(Failure) -> String? {
            if let given { return given }
            if let value = variable(key) { return value }
            guard let value = file[key] else { return nil }
            guard let text = value.stringValue ?? value.intValue.map(String.init) else {
                throw Failure(message: "the configuration file's \"\(key)\" must be a string")
            }
            return text
        }
        func number(_ key: String, _ given: Int?, in range: ClosedRange<Int>) throws(Failure) -> Int? {
            let raw: String?
            if let given { raw = String(given) } else if let value = variable(key) { raw = value } else {
                raw = file[key].map { $0.intValue.map(String.init) ?? $0.stringValue ?? "?" }
            }
            guard let raw else { return nil }
            guard let value = Int(raw), range.contains(value) else {
                throw Failure(message: "\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(raw)")
            }
            return value
        }

        if let listen = try text("listen", command.listen) {
            guard let (host, port) = Self.hostAndPort(listen) else {
                throw Failure(message: "listen must be HOST:PORT (such as 127.0.0.1:7118), not \(listen)")
            }
            listenHost = host
            listenPort = port
        }
        if let address = try text("entitled", command.entitled) {
            guard let parsed = Self.serverAddress(address) else {
                throw Failure(message: "entitled must be HOST:PORT, [IPv6]:PORT or unix:/path, not \(address)")
            }
            entitled = parsed
        }
        if let path = try text("token-file", command.tokenFile) {
            guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw Failure(message: "cannot read the token file \(path)")
            }
            let first = contents.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let token = first.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw Failure(message: "the token file \(path) is empty: its first line must hold the token") }
            self.token = token
        }
        /// Secrets: the command line's (repeated), the variable's (comma-separated), the file's (one or a list).
        func secrets(_ key: String, _ given: [String]) throws(Failure) -> [String] {
            if !given.isEmpty { return given }
            if let value = variable(key) {
                return value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            guard let value = file[key] else { return [] }
            if let one = value.stringValue { return [one] }
            if let many = value.arrayValue?.compactMap(\.stringValue), !many.isEmpty { return many }
            throw Failure(message: "the configuration file's \"\(key)\" must be a string or an array of strings")
        }
        let googlePackage = try text("google-package", command.googlePackage)
        let googleKey = try text("google-service-account", command.googleServiceAccount)
        switch (googlePackage, googleKey) {
        case (let package?, let path?):
            guard let json = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw Failure(message: "cannot read the Google service account key file \(path)")
            }
            var google = GooglePlayReceiver.Settings(
                packageName: package, serviceAccountJSON: json, pushAudience: try text("google-push-audience", command.googlePushAudience),
                pushEmail: try text("google-push-email", command.googlePushEmail)
            )
            if let url = try text("google-api-url", command.googleApiUrl) { google.apiURL = url.hasSuffix("/") ? String(url.dropLast()) : url }
            google.tokenURL = try text("google-token-url", command.googleTokenUrl)
            if let url = try text("google-certs-url", command.googleCertsUrl) { google.certificatesURL = url }
            self.google = google
        case (nil, nil):
            break
        case (nil, _):
            throw Failure(message: "google-service-account needs google-package: the app whose notifications are accepted")
        case (_, nil):
            throw Failure(message: "google-package needs google-service-account: the key that reads purchases from the Play Developer API")
        }
        let whopSecrets = try secrets("whop-secret", command.whopSecret)
        if !whopSecrets.isEmpty {
            var whop = WhopReceiver.Settings(secrets: whopSecrets)
            whop.userMetadataKey = try text("whop-user-key", command.whopUserKey) ?? whop.userMetadataKey
            self.whop = whop
        }
        let secrets = try secrets("stripe-secret", command.stripeSecret)
        if !secrets.isEmpty {
            var stripe = StripeReceiver.Settings(secrets: secrets)
            stripe.userMetadataKey = try text("stripe-user-key", command.stripeUserKey) ?? stripe.userMetadataKey
            stripe.gracePeriodDays = try number("stripe-grace-days", command.stripeGraceDays, in: 0...365) ?? stripe.gracePeriodDays
            self.stripe = stripe
        }
        let appleRoot = try text("apple-root-ca", command.appleRootCa)
        let appleBundle = try text("apple-bundle-id", command.appleBundleId)
        switch (appleRoot, appleBundle) {
        case (let path?, let bundle?):
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw Failure(message: "cannot read the App Store root certificate file \(path)")
            }
            apple = AppleReceiver.Settings(
                rootCertificatesPEM: pem, bundleID: bundle, appAppleID: try number("apple-app-id", command.appleAppId, in: 1...Int.max)
            )
        case (nil, nil):
            break
        case (nil, _):
            throw Failure(message: "apple-bundle-id needs apple-root-ca: the root certificate the notifications must lead to")
        case (_, nil):
            throw Failure(message: "apple-root-ca needs apple-bundle-id: the app whose notifications are accepted")
        }
        stateDirectory = try text("state-dir", command.stateDir) ?? stateDirectory
        unmatchedRetrySeconds = try number("unmatched-retry-seconds", command.unmatchedRetrySeconds, in: 1...86_400) ?? unmatchedRetrySeconds
        idleTimeoutSeconds = try number("idle-timeout", command.idleTimeout, in: 1...3_600) ?? idleTimeoutSeconds
        maximumConnections = try number("max-connections", command.maxConnections, in: 1...100_000) ?? maximumConnections
        if let level = try text("log-level", command.logLevel) {
            guard let parsed = Logger.Level(rawValue: level) else {
                throw Failure(message: "log-level must be trace, debug, info, notice, warning, error or critical, not \(level)")
            }
            logLevel = parsed
        }
    }

    /// The stores served, for the start log.
    var storesOn: [String] {
        (apple == nil ? [] : ["apple"]) + (google == nil ? [] : ["google"]) + (stripe == nil ? [] : ["stripe"]) + (whop == nil ? [] : ["whop"])
    }

    private static func readFile(_ path: String?) throws(Failure) -> [String: JSONValue] {
        guard let path else { return [:] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(message: "cannot read the configuration file \(path)")
        }
        guard let json = try? JSONValue(parsing: String(decoding: data, as: UTF8.self)), let members = json.objectMembers else {
            throw Failure(message: "the configuration file \(path) is not a JSON object")
        }
        var values: [String: JSONValue] = [:]
        for (key, value) in members {
            guard keys.contains(key) else {
                throw Failure(message: "the configuration file \(path) has an unknown key \"\(key)\"; keys: \(keys.sorted().joined(separator: ", "))")
            }
            guard values.updateValue(value, forKey: key) == nil else {
                throw Failure(message: "the configuration file \(path) has the key \"\(key)\" twice")
            }
        }
        return values
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
