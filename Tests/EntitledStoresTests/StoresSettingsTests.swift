import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The receiver's settings from a configuration file, its token for a server with authentication, and
/// what it refuses at start. Its settings are layered by swift-configuration as `entitled`'s are (command
/// line > `ENTITLED_STORES_*` > file > default), with the same refusals of a mistaken file or variable.
@Suite struct StoresSettingsTests {
    /// Starts `entitled-stores` (logging at info), stops it, and returns its ready line and its start log line.
    static func started(arguments: [String], environment: [String: String], in directory: TemporaryDirectory) throws -> (ready: String, start: String) {
        let process = ServerProcess(
            arguments: ["--listen", "127.0.0.1:0"] + arguments, workingDirectory: directory.path, environment: environment, executable: "entitled-stores"
        )
        try process.startAndWaitUntilReady()
        _ = process.stop()
        let log = process.standardErrorText()
        return (process.readyLine, try #require(log.split(separator: "\n").first { $0.hasSuffix("starting entitled-stores") }.map(String.init), "\(log)"))
    }

    /// Runs `entitled-stores`, expected to refuse to start; returns its stderr.
    static func refusal(arguments: [String], environment: [String: String] = [:], in directory: TemporaryDirectory) throws -> String {
        let process = ServerProcess(
            arguments: ["--listen", "127.0.0.1:0"] + arguments, workingDirectory: directory.path, environment: environment, executable: "entitled-stores"
        )
        #expect(try process.runToExit() == 64, "\(arguments) \(environment)")
        return process.standardErrorText()
    }

    @Test func theCommandLineWinsOverTheEnvironmentWhichWinsOverTheFile() throws {
        let files = try TemporaryDirectory()
        try #"{"entitled": "127.0.0.1:1", "idle-timeout": 5, "max-connections": "7", "whop-secret": "whsec_file", "listen": 7118}"#
            .write(toFile: files.path + "/stores.json", atomically: true, encoding: .utf8)
        // The file named by the variable; an empty variable is no setting, so the file's address holds.
        let first = try Self.started(
            arguments: ["--max-connections", "9"],
            environment: [
                "ENTITLED_STORES_CONFIG": "stores.json", "ENTITLED_STORES_IDLE_TIMEOUT": "6", "ENTITLED_STORES_ENTITLED": "",
                "ENTITLED_STORES_STRIPE_SECRET": "whsec_a, whsec_b",
            ],
            in: files
        )
        #expect(first.ready.hasSuffix("(stores: stripe, whop; entitled 127.0.0.1:1)"), "\(first.ready)")
        #expect(first.start.contains("idleTimeout=6s") && first.start.contains("maxConnections=9"), "\(first.start)")
        // The file's values where nothing else gives them.
        let second = try Self.started(arguments: ["--config", "stores.json", "--entitled", "127.0.0.1:2"], environment: ["ENTITLED_STORES_ENTITLED": "unix:/x"], in: files)
        #expect(second.ready.hasSuffix("(stores: whop; entitled 127.0.0.1:2)"), "\(second.ready)")
        #expect(second.start.contains("idleTimeout=5s") && second.start.contains("maxConnections=7"), "\(second.start)")
    }

    @Test func aMistakeInTheFileOrAVariableStopsTheStartNamingWhereItIs() throws {
        let files = try TemporaryDirectory()
        let cases: [(file: String, error: String)] = [
            (#"{"listen": "127.0.0.1:1", "listen": "127.0.0.1:2"}"#, #"the key "listen" is given more than once in the configuration file stores.json; keep one"#),
            (#"{"config": "other.json"}"#, #"the configuration file stores.json cannot name another configuration file (key "config")"#),
            (#"{"max-connections": "many"}"#, #"the key "max-connections" in the configuration file stores.json must be a whole number, not the string "many""#),
            (#"{"stripe-secret": ["whsec_x", 1]}"#, #"the key "stripe-secret" in the configuration file stores.json must be a string or a list of strings, not a list"#),
            (#"["listen"]"#, #"the configuration file stores.json must be one JSON object"#),
            (#"{"listen": "#, "the configuration file stores.json is not valid JSON: line 1, column 12"),
            // The same reader as `entitled`'s (EntitledConfiguration): a near miss is named.
            (#"{"stripe-secrets": "whsec_x"}"#, #"unknown key "stripe-secrets" in the configuration file stores.json; did you mean "stripe-secret"?"#),
            (#"{"listen": "127.0.0.1:1",}"#, "JSON allows no trailing comma"),
        ]
        for (file, error) in cases {
            try file.write(toFile: files.path + "/stores.json", atomically: true, encoding: .utf8)
            let errors = try Self.refusal(arguments: ["--config", "stores.json"], in: files)
            #expect(errors.contains(error), "\(file): \(errors)")
        }
        #expect(try Self.refusal(arguments: ["--config", "missing.json"], in: files).contains("cannot read the configuration file missing.json: No such file or directory"))
        let variable = try Self.refusal(arguments: [], environment: ["ENTITLED_STORES_MAX_CONNECTIONS": "lots"], in: files)
        #expect(variable.contains(#"ENTITLED_STORES_MAX_CONNECTIONS must be a whole number, not "lots""#), "\(variable)")
        // A value of the right type out of range is refused whatever gave it.
        let range = try Self.refusal(arguments: [], environment: ["ENTITLED_STORES_IDLE_TIMEOUT": "0"], in: files)
        #expect(range.contains("--idle-timeout must be a whole number from 1 to 3600, not 0"), "\(range)")
        #expect(range.contains("Note: --idle-timeout came from ENTITLED_STORES_IDLE_TIMEOUT."), "\(range)")
        try #"{"log-level": "loud"}"#.write(toFile: files.path + "/stores.json", atomically: true, encoding: .utf8)
        let fromFile = try Self.refusal(arguments: ["--config", "stores.json"], in: files)
        #expect(fromFile.contains("--log-level must be trace, debug"), "\(fromFile)")
        #expect(fromFile.contains("Note: --log-level came from the configuration file stores.json."), "\(fromFile)")
        // `--config` wins over the variable: the broken file it names is not read.
        try "{}".write(toFile: files.path + "/good.json", atomically: true, encoding: .utf8)
        let started = try Self.started(arguments: ["--config", "good.json"], environment: ["ENTITLED_STORES_CONFIG": "stores.json"], in: files)
        #expect(started.ready.contains("stores: none"), "\(started.ready)")
    }

    /// The file and the environment take every option of the command line (the table of keys is kept by hand).
    @Test func theFileTakesEveryOptionOfTheCommandLine() throws {
        let files = try TemporaryDirectory()
        let help = ServerProcess(arguments: ["serve", "--help"], workingDirectory: files.path, executable: "entitled-stores")
        #expect(try help.runToExit() == 0)
        let options = Set(help.standardOutputText().split(separator: "\n").compactMap { $0.firstMatch(of: /^  --([a-z][a-z-]*)/).map { String($0.1) } })
        #expect(options.count > 20, "\(options)")
        try #"{"nonsense": 1}"#.write(toFile: files.path + "/stores.json", atomically: true, encoding: .utf8)
        let errors = try Self.refusal(arguments: ["--config", "stores.json"], in: files)
        let listed = try #require(errors.firstMatch(of: /without their dashes: ([a-z, -]+)/), "\(errors)").1
        #expect(Set(listed.split(separator: ", ").map(String.init)) == options.subtracting(["config", "help"]))
    }

    @Test func aConfigurationFileGivesTheSecretAndTheTokenOfAServerWithAuthentication() throws {
        let entitled = try RunningEntitled(tokens: [.admin])
        let files = try TemporaryDirectory()
        let tokenFile = files.path + "/stores.token"
        try (AuthFileEntry.admin.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let config = files.path + "/stores.json"
        try #"{"token-file": "\#(tokenFile)", "stripe-secret": ["whsec_old", "\#(StripeFixtures.secret)"], "stripe-user-key": "uid"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--config", config])
        let body = StripeFixtures.subscriptionEvent(
            "evt_cfg", type: "customer.subscription.created", created: StripeFixtures.now - 60, subscription: "sub_cfg",
            periodEnd: StripeFixtures.now + 86_400, user: nil
        )
        #expect(try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body)).body == "applied\n")
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port), token: AuthFileEntry.admin.token)
        #expect(try client.send(.memberships(originalTransactionId: "sub_cfg")).memberships?.first?.user == "cus_9")

        // Without the token the server refuses the receiver: 503, so Stripe delivers it again once fixed.
        let anonymous = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret])
        let other = StripeFixtures.subscriptionEvent("evt_anon", type: "customer.subscription.created", created: StripeFixtures.now - 60, subscription: "sub_anon", periodEnd: StripeFixtures.now + 86_400)
        let refused = try anonymous.post("/stripe", body: other, headers: StripeFixtures.signed(other))
        #expect(refused.status == 503)
        #expect(refused.body.contains("refused this receiver's token"))
    }

    @Test func anUnknownKeyOrHalfAStoresSettingsStopTheStart() throws {
        let files = try TemporaryDirectory()
        let config = files.path + "/stores.json"
        try #"{"stripe-secrets": "whsec_x"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        for arguments in [["--config", config], ["--apple-bundle-id", "com.example.app"], ["--google-package", "com.example.app"]] {
            let process = ServerProcess(arguments: ["--listen", "127.0.0.1:0"] + arguments, workingDirectory: files.path, executable: "entitled-stores")
            #expect(try process.runToExit() != 0, "\(arguments)")
            let errors = process.standardErrorText()
            #expect(errors.contains("stripe-secrets") || errors.contains("needs"), "\(errors)")
        }
    }
}
