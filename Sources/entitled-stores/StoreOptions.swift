import ArgumentParser
import Configuration
import EntitledConfiguration
import Foundation

/// The settings every subcommand that talks to the stores and to `entitled` takes (`serve`, `import`,
/// `reconcile`, `backfill`): the same options, environment variables and configuration file keys, so the
/// receiver's settings file serves them all.
struct StoreOptions: ParsableArguments {
    @Option(help: "A JSON file of settings, keys named as the long options.")
    var config: String?

    @Option(help: "The address to listen on for the stores' HTTP requests (default: \(StoresSettings.defaultListen)).")
    var listen: String?

    @Option(help: "The entitled server: HOST:PORT, [IPv6]:PORT or unix:/path/to/socket (default: 127.0.0.1:7117).")
    var entitled: String?

    @Option(help: "A file whose first line is the token of an entitled role that may write (for a server with --auth).")
    var tokenFile: String?

    @Option(help: "App Store: the PEM file of the root certificate the notifications' chains must lead to (Apple Root CA - G3, from https://www.apple.com/certificateauthority/).")
    var appleRootCa: String?

    @Option(help: "App Store: the app's bundle id; notifications for another app are refused. Needed with --apple-root-ca.")
    var appleBundleId: String?

    @Option(help: "App Store: the app's Apple id (appAppleId), checked when a notification carries one.")
    var appleAppId: Int?

    @Option(help: "App Store Server API (imports, backfill, reconciliation): the in-app purchase key's .p8 file, from App Store Connect > Users and Access > Integrations.")
    var appleKeyFile: String?

    @Option(help: "App Store Server API: the key's id (needed with --apple-key-file).")
    var appleKeyId: String?

    @Option(help: "App Store Server API: the issuer id of the team's keys (needed with --apple-key-file).")
    var appleIssuerId: String?

    @Option(help: "App Store Server API: the production address (default: https://api.storekit.itunes.apple.com).")
    var appleApiUrl: String?

    @Option(help: "App Store Server API: the sandbox address, asked for transactions production does not know; 'none' asks production only (default: https://api.storekit-sandbox.itunes.apple.com).")
    var appleSandboxApiUrl: String?

    @Option(help: "Google Play: the app's package name; notifications for another app are refused.")
    var googlePackage: String?

    @Option(help: "Google Play: the service account's JSON key file, for the Play Developer API (needed with --google-package).")
    var googleServiceAccount: String?

    @Option(help: "Google Play: the audience of the Pub/Sub push subscription's authentication; with it, every push must carry Google's token for it.")
    var googlePushAudience: String?

    @Option(help: "Google Play: the service account the push subscription authenticates as (checked with --google-push-audience).")
    var googlePushEmail: String?

    @Option(help: "Google Play: the Play Developer API's base URL (default: https://androidpublisher.googleapis.com).")
    var googleApiUrl: String?

    @Option(help: "Google Play: the OAuth token endpoint (default: the key's token_uri).")
    var googleTokenUrl: String?

    @Option(help: "Google Play: Google's signing keys for push tokens (default: https://www.googleapis.com/oauth2/v3/certs).")
    var googleCertsUrl: String?

    @Option(help: "Stripe: the endpoint's signing secret (whsec_...). Repeat it while one secret replaces another. Prefer the environment or the file to the command line, which other users can see.")
    var stripeSecret: [String] = []

    @Option(help: "Stripe: the subscription metadata key that holds the app's user id; without it the customer id is the user (default: app_user_id).")
    var stripeUserKey: String?

    @Option(help: "Stripe: days of access after a failed renewal (past_due) while Stripe retries the charge (default: 7).")
    var stripeGraceDays: Int?

    @Option(help: "Stripe: a file whose first line is a secret or restricted API key (read access to invoices), to find the invoice of a refunded charge: API versions from 2025-03-31 no longer name it in the charge.")
    var stripeApiKeyFile: String?

    @Option(help: "Stripe: the API's address (default: https://api.stripe.com).")
    var stripeApiUrl: String?

    @Option(help: "A file whose first line is the bearer token (at least 16 bytes) the app's backend sends to POST /purchases/google, the purchase-time path; without it the path is not served.")
    var purchasesTokenFile: String?

    @Option(help: "Whop: the webhook secret. Repeat it while one secret replaces another. Prefer the environment or the file.")
    var whopSecret: [String] = []

    @Option(help: "Whop: the membership metadata key that holds the app's user id; without it the Whop user id is the user (default: app_user_id).")
    var whopUserKey: String?

    @Option(help: "Where the receiver keeps notifications waiting for their purchase to be granted (default: ./entitled-stores-data).")
    var stateDir: String?

    @Option(help: "Seconds between tries of the kept notifications (default: 30).")
    var unmatchedRetrySeconds: Int?

    @Option(help: "Hours between reconciliations of the store memberships with the stores' APIs in serve; 0 never reconciles (default: 24).")
    var reconcileIntervalHours: Int?

    @Option(help: "Days after its access ended that a membership is still reconciled (a late refund, a renewal after a lapse) (default: 30).")
    var reconcileWindowDays: Int?

    @Option(help: "Seconds a connection may send nothing (no header, no body bytes, no request) before it is closed (default: 10).")
    var idleTimeout: Int?

    @Option(help: "Seconds a request may take to arrive whole, header and body, however steadily it trickles; then it is answered 408 and its connection closed (default: 30).")
    var requestTimeout: Int?

    @Option(help: "Connections served at once; one more is accepted, and the connection that has waited longest (at least 1 s) for its request is closed to make room (default: 128).")
    var maxConnections: Int?

    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical (default: info).")
    var logLevel: String?

    @Option(help: ArgumentHelp("serve: deliver the change feed to the endpoints of this JSON file as signed webhooks (Protocol/WEBHOOKS.md).", valueName: "file"))
    var webhooks: String?

    /// The settings, layered: the command line, the environment, the file, the defaults.
    func settings() throws -> StoresSettings {
        do {
            return try StoresSettings(commandLine: configurationValues, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// What the command line gave, as configuration values by key: the first of the layered sources.
    var configurationValues: [AbsoluteConfigKey: ConfigValue] {
        let given: [(String, ConfigContent?)] = [
            ("config", config.map(ConfigContent.string)), ("listen", listen.map(ConfigContent.string)),
            ("entitled", entitled.map(ConfigContent.string)), ("token-file", tokenFile.map(ConfigContent.string)),
            ("apple-root-ca", appleRootCa.map(ConfigContent.string)), ("apple-bundle-id", appleBundleId.map(ConfigContent.string)),
            ("apple-app-id", appleAppId.map(ConfigContent.int)),
            ("apple-key-file", appleKeyFile.map(ConfigContent.string)), ("apple-key-id", appleKeyId.map(ConfigContent.string)),
            ("apple-issuer-id", appleIssuerId.map(ConfigContent.string)), ("apple-api-url", appleApiUrl.map(ConfigContent.string)),
            ("apple-sandbox-api-url", appleSandboxApiUrl.map(ConfigContent.string)), ("google-package", googlePackage.map(ConfigContent.string)),
            ("google-service-account", googleServiceAccount.map(ConfigContent.string)),
            ("google-push-audience", googlePushAudience.map(ConfigContent.string)), ("google-push-email", googlePushEmail.map(ConfigContent.string)),
            ("google-api-url", googleApiUrl.map(ConfigContent.string)), ("google-token-url", googleTokenUrl.map(ConfigContent.string)),
            ("google-certs-url", googleCertsUrl.map(ConfigContent.string)),
            ("stripe-secret", stripeSecret.isEmpty ? nil : .stringArray(stripeSecret)), ("stripe-user-key", stripeUserKey.map(ConfigContent.string)),
            ("stripe-grace-days", stripeGraceDays.map(ConfigContent.int)),
            ("stripe-api-key-file", stripeApiKeyFile.map(ConfigContent.string)), ("purchases-token-file", purchasesTokenFile.map(ConfigContent.string)), ("stripe-api-url", stripeApiUrl.map(ConfigContent.string)), ("whop-secret", whopSecret.isEmpty ? nil : .stringArray(whopSecret)),
            ("whop-user-key", whopUserKey.map(ConfigContent.string)), ("state-dir", stateDir.map(ConfigContent.string)),
            ("unmatched-retry-seconds", unmatchedRetrySeconds.map(ConfigContent.int)),
            ("reconcile-interval-hours", reconcileIntervalHours.map(ConfigContent.int)), ("reconcile-window-days", reconcileWindowDays.map(ConfigContent.int)), ("idle-timeout", idleTimeout.map(ConfigContent.int)),
            ("request-timeout", requestTimeout.map(ConfigContent.int)), ("max-connections", maxConnections.map(ConfigContent.int)), ("log-level", logLevel.map(ConfigContent.string)),
            ("webhooks", webhooks.map(ConfigContent.string)),
        ]
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for case (let name, let content?) in given {
            values[AbsoluteConfigKey(ConfigKey(name))] = ConfigValue(content, isSecret: SettingTable.stores.named(name)?.kind == .secrets)
        }
        return values
    }
}
