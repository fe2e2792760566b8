import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `entitled --config FILE`, `ENTITLED_CONFIG` and the `ENTITLED_*` variables, on the real executable: the
/// settings it starts with (read from its start log line), its precedence, and how it refuses a mistake.
@Suite struct ConfigurationFileTests {
    /// The exit status of a refused flag (ArgumentParser's validation failure, EX_USAGE).
    static let usageStatus: Int32 = 64

    /// A temporary directory with a configuration file of this text in it.
    struct ConfiguredDirectory {
        let directory: TemporaryDirectory
        let configPath: String

        init(_ json: String, named name: String = "entitled.json") throws {
            directory = try TemporaryDirectory()
            configPath = directory.path + "/" + name
            try json.write(toFile: configPath, atomically: true, encoding: .utf8)
        }
    }

    /// Starts `entitled` (JSON logs), stops it, and returns the metadata of its start log line and its stderr.
    static func startingSettings(
        arguments: [String],
        environment: [String: String] = [:],
        in directory: TemporaryDirectory
    ) throws -> (settings: [String: String], log: String) {
        let server = ServerProcess(
            arguments: ["--log-format", "json"] + arguments,
            workingDirectory: directory.path,
            environment: environment
        )
        try server.startAndWaitUntilReady()
        #expect(server.stop() == 0)
        let log = server.standardErrorText()
        let objects = log.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let starting = try #require(objects.first { ($0["message"] as? String)?.hasPrefix("starting entitled") == true }, "\(log)")
        return (try #require(starting["metadata"] as? [String: String]), log)
    }

    /// Runs `entitled` that is expected to refuse to start; returns its exit status and stderr.
    static func refusal(arguments: [String], environment: [String: String] = [:], in directory: TemporaryDirectory) throws -> (status: Int32, errors: String) {
        let server = ServerProcess(arguments: arguments, workingDirectory: directory.path, environment: environment)
        let status = try server.runToExit()
        return (status, server.standardErrorText())
    }

    /// A TCP port nobody listens on right now (the kernel's choice, released at once).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 ? getsockname(descriptor, $0, &length) : -1
            }
        }
        try #require(status == 0)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: - Settings from the file

    @Test func theFilesPortAndDataDirectoryAreWhereTheServerListensAndWrites() async throws {
        let port = try Self.freePort()
        let configured = try ConfiguredDirectory(#"{"port": \#(port), "data-dir": "from-file", "max-connections": "77"}"#)
        let server = ServerProcess(
            arguments: ["--config", configured.configPath, "--log-format", "json"],
            workingDirectory: configured.directory.path
        )
        #expect(try server.startAndWaitUntilReady() == port)
        #expect(server.readyLine.contains("data directory from-file"))
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
        #expect(server.stop() == 0)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: configured.directory.path + "/from-file", isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(!FileManager.default.fileExists(atPath: configured.directory.path + "/entitled-data"))
        let log = server.standardErrorText()
        #expect(log.contains(#""config":"\#(configured.configPath)""#))
        #expect(log.contains(#""maxConnections":"77""#))
    }

    @Test func theStartLogLineSaysNoConfigurationFileWhenThereIsNone() throws {
        let directory = try TemporaryDirectory()
        let (settings, _) = try Self.startingSettings(arguments: ["--port", "0"], in: directory)
        #expect(settings["config"] == "none")
    }

    @Test func theConfigVariableNamesTheFileWhenTheCommandLineDoesNot() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "max-connections": 44}"#)
        let (settings, _) = try Self.startingSettings(
            arguments: [],
            environment: ["ENTITLED_CONFIG": configured.configPath],
            in: configured.directory
        )
        #expect(settings["maxConnections"] == "44")
        #expect(settings["config"] == configured.configPath)
    }

    @Test func theCommandLinesConfigWinsOverTheConfigVariable() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "max-connections": 45}"#)
        // The variable's file is broken: it must not even be read.
        let broken = configured.directory.path + "/broken.json"
        try "{".write(toFile: broken, atomically: true, encoding: .utf8)
        let (settings, _) = try Self.startingSettings(
            arguments: ["--config=\(configured.configPath)"],
            environment: ["ENTITLED_CONFIG": broken],
            in: configured.directory
        )
        #expect(settings["maxConnections"] == "45")
        #expect(settings["config"] == configured.configPath)
    }

    // MARK: - Precedence: command line > environment > file > default

    @Test func theEnvironmentOverridesTheFileAndTheFileStillGivesTheRest() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "max-connections": 11, "idle-timeout": 5, "min-seq-wait": 300}"#)
        let (settings, _) = try Self.startingSettings(
            arguments: ["--config", configured.configPath],
            environment: ["ENTITLED_MAX_CONNECTIONS": "22"],
            in: configured.directory
        )
        #expect(settings["maxConnections"] == "22")
        #expect(settings["idleTimeout"] == "5.0s")
        #expect(settings["shutdownTimeout"] == "10.0s")  // the built-in default, set by neither
        #expect(settings["minSeqWait"] == "300ms")
    }

    @Test func theCommandLineOverridesTheEnvironmentAndTheFile() throws {
        // Port 1 from the file or 2 from the environment would fail to bind: the command line's 0 must win.
        let configured = try ConfiguredDirectory(#"{"port": 1, "max-connections": 11, "data-dir": "file-data"}"#)
        let (settings, _) = try Self.startingSettings(
            arguments: ["--config", configured.configPath, "--port", "0", "--max-connections=33", "--data-dir", "cli-data"],
            environment: ["ENTITLED_PORT": "2", "ENTITLED_MAX_CONNECTIONS": "22", "ENTITLED_DATA_DIR": "env-data"],
            in: configured.directory
        )
        #expect(settings["maxConnections"] == "33")
        #expect(settings["dataDir"] == "cli-data")
        #expect(settings["tcp"] == "127.0.0.1:0")
    }

    @Test func aFalseEnvironmentFlagUndoesTheFilesTrueFlag() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "insecure-no-auth": true}"#)
        let fromFile = try Self.startingSettings(arguments: ["--config", configured.configPath], in: configured.directory)
        #expect(fromFile.settings["auth"] == "off (insecure)")
        for falseValue in ["false", "0", "FALSE"] {
            let undone = try Self.startingSettings(
                arguments: ["--config", configured.configPath],
                environment: ["ENTITLED_INSECURE_NO_AUTH": falseValue],
                in: configured.directory
            )
            #expect(undone.settings["auth"] == "off", "ENTITLED_INSECURE_NO_AUTH=\(falseValue)")
        }
        // And the command line's flag still wins over the environment's false.
        let fromCommandLine = try Self.startingSettings(
            arguments: ["--config", configured.configPath, "--insecure-no-auth"],
            environment: ["ENTITLED_INSECURE_NO_AUTH": "false"],
            in: configured.directory
        )
        #expect(fromCommandLine.settings["auth"] == "off (insecure)")
    }

    @Test func aTrueEnvironmentFlagSetsItAndAFalseFileFlagLeavesItUnset() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "insecure-no-auth": false}"#)
        let unset = try Self.startingSettings(arguments: ["--config", configured.configPath], in: configured.directory)
        #expect(unset.settings["auth"] == "off")
        let set = try Self.startingSettings(
            arguments: ["--port", "0"],
            environment: ["ENTITLED_INSECURE_NO_AUTH": "1"],
            in: configured.directory
        )
        #expect(set.settings["auth"] == "off (insecure)")
    }

    @Test func anEmptyEnvironmentVariableCountsAsUnset() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "max-connections": 12}"#)
        let (settings, _) = try Self.startingSettings(
            arguments: ["--config", configured.configPath],
            environment: ["ENTITLED_MAX_CONNECTIONS": "", "ENTITLED_INSECURE_NO_AUTH": ""],
            in: configured.directory
        )
        #expect(settings["maxConnections"] == "12")
        #expect(settings["auth"] == "off")
    }

    /// The parser keeps the last of an option given twice, and accepts a flag twice.
    @Test func theParserKeepsTheLastOfARepeatedOptionAndAcceptsARepeatedFlag() throws {
        let directory = try TemporaryDirectory()
        let (settings, _) = try Self.startingSettings(
            arguments: ["--port", "1", "--max-connections=5", "--insecure-no-auth", "--port", "0", "--max-connections", "6", "--insecure-no-auth"],
            in: directory
        )
        #expect(settings["maxConnections"] == "6")
        #expect(settings["tcp"] == "127.0.0.1:0")
        #expect(settings["auth"] == "off (insecure)")
    }

    // MARK: - Mistakes stop the start

    @Test func anUnknownKeyStopsTheStartNamingTheFileTheKeyAndTheClosestKey() throws {
        let configured = try ConfiguredDirectory(#"{"port": 0, "prot": 7117}"#)
        let (status, errors) = try Self.refusal(arguments: ["--config", configured.configPath], in: configured.directory)
        #expect(status == Self.usageStatus)
        #expect(errors.contains(#"unknown key "prot" in the configuration file \#(configured.configPath); did you mean "port"?"#), "\(errors)")
        #expect(errors.contains("data-dir"))  // the keys there are
        #expect(!errors.contains("listening on"))
    }

    @Test(arguments: [
        (#"{"port": true}"#, #"the key "port" in the configuration file"#, "must be a string or a number, not true"),
        (#"{"insecure-no-auth": "yes"}"#, #"the key "insecure-no-auth""#, #"must be true or false, not the string "yes""#),
        (#"{"no-tcp": 1}"#, #"the key "no-tcp""#, "must be true or false, not the number 1"),
        (#"{"data-dir": null}"#, #"the key "data-dir""#, "must be a string or a number, not null"),
        (#"{"host": ["127.0.0.1"]}"#, #"the key "host""#, "must be a string or a number, not a list"),
        (#"{"auth": {"file": "x"}}"#, #"the key "auth""#, "must be a string or a number, not an object"),
        (#"{"config": "other.json"}"#, "cannot name another configuration file", #"key "config""#),
        (#"[{"port": 7117}]"#, "must be one JSON object", "not a list"),
        (#""port""#, "must be one JSON object", #"not the string "port""#),
        (#"{"port": 7117,"#, "is not valid JSON: line 1, column 15", "the text ends inside an object: a } is missing"),
        ("{\n  \"port\": 0,\n  \"host\": \"127.0.0.1\",\n}\n", "is not valid JSON: line 4, column 1", "JSON allows no trailing comma"),
        ("{\n  \"port\": 0\n  \"host\": \"::1\"\n}", "is not valid JSON: line 3, column 3", "expected , or } after a value"),
        (#"{'port': 0}"#, "is not valid JSON: line 1, column 2", "keys take double quotes"),
        (#"{"port": 0} // the port"#, "is not valid JSON: line 1, column 13", "JSON allows no comments"),
        (#"{"port": 0} {"#, "is not valid JSON: line 1, column 13", "unexpected text after the JSON value"),
        (#"{"port": 0, "host": "127.0.0.1\#n"}"#, "is not valid JSON: line 1, column 31", "a string holds a line break"),
        ("", "is not valid JSON: line 1, column 1", "the file holds no JSON value"),
        (#"{"port": 0, "data-dir": "a", "port": 7117}"#, #"the key "port" is given more than once"#, "keep one"),
    ])
    func aMalformedFileStopsTheStartNamingTheFileAndTheProblem(json: String, problem: String, detail: String) throws {
        let configured = try ConfiguredDirectory(json)
        let (status, errors) = try Self.refusal(arguments: ["--config", configured.configPath, "--port", "0"], in: configured.directory)
        #expect(status == Self.usageStatus)
        #expect(errors.contains(configured.configPath), "\(errors)")
        #expect(errors.contains(problem), "\(errors)")
        #expect(errors.contains(detail), "\(errors)")
    }

    @Test func aMissingFileStopsTheStartWithTheSystemsReason() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path + "/missing.json"
        for (arguments, environment) in [(["--config", missing], [String: String]()), ([], ["ENTITLED_CONFIG": missing])] {
            let (status, errors) = try Self.refusal(arguments: arguments, environment: environment, in: directory)
            #expect(status == Self.usageStatus)
            #expect(errors.contains("cannot read the configuration file \(missing): No such file or directory"), "\(errors)")
        }
        let (status, errors) = try Self.refusal(arguments: ["--config", directory.path], in: directory)
        #expect(status == Self.usageStatus)
        #expect(errors.contains("cannot read the configuration file \(directory.path): it is a directory"), "\(errors)")
    }

    @Test func aValueTheParserRefusesNamesWhereItCameFrom() throws {
        let configured = try ConfiguredDirectory(#"{"port": 70000}"#)
        let fromFile = try Self.refusal(arguments: ["--config", configured.configPath], in: configured.directory)
        #expect(fromFile.status == Self.usageStatus)
        #expect(fromFile.errors.contains("--port must be between 0 and 65535, not 70000"), "\(fromFile.errors)")
        #expect(fromFile.errors.contains("--port came from the configuration file \(configured.configPath)"), "\(fromFile.errors)")

        let fromEnvironment = try Self.refusal(arguments: [], environment: ["ENTITLED_LOG_LEVEL": "loud"], in: configured.directory)
        #expect(fromEnvironment.status == Self.usageStatus)
        #expect(fromEnvironment.errors.contains("--log-level came from ENTITLED_LOG_LEVEL"), "\(fromEnvironment.errors)")

        // The command line's own value is the one refused: no note blames the file.
        let fromCommandLine = try Self.refusal(arguments: ["--config", configured.configPath, "--port=70001"], in: configured.directory)
        #expect(fromCommandLine.status == Self.usageStatus)
        #expect(fromCommandLine.errors.contains("not 70001"), "\(fromCommandLine.errors)")
        #expect(!fromCommandLine.errors.contains("came from"), "\(fromCommandLine.errors)")
    }

    @Test func aMinSeqWaitOutOfRangeIsRefusedNamingTheRange() throws {
        let directory = try TemporaryDirectory()
        let refused = try Self.refusal(arguments: ["--port", "0"], environment: ["ENTITLED_MIN_SEQ_WAIT": "60001"], in: directory)
        #expect(refused.status == Self.usageStatus)
        #expect(refused.errors.contains("--min-seq-wait must be from 0 to 60000 milliseconds, not 60001"), "\(refused.errors)")
        #expect(refused.errors.contains("--min-seq-wait came from ENTITLED_MIN_SEQ_WAIT"), "\(refused.errors)")
    }

    @Test func aFlagVariableThatIsNoBooleanStopsTheStart() throws {
        let directory = try TemporaryDirectory()
        let (status, errors) = try Self.refusal(arguments: ["--port", "0"], environment: ["ENTITLED_NO_TCP": "yes"], in: directory)
        #expect(status == Self.usageStatus)
        #expect(errors.contains(#"ENTITLED_NO_TCP must be true, false, 1 or 0, not "yes""#), "\(errors)")
    }

    @Test func aValueNotOfItsOptionsTypeStopsTheStartNamingTheVariableOrTheKey() throws {
        let directory = try TemporaryDirectory()
        for (variable, value, expected) in [
            ("ENTITLED_PORT", "abc", "a whole number"), ("ENTITLED_MAX_CONNECTIONS", "1.5", "a whole number"),
            ("ENTITLED_IDLE_TIMEOUT", "soon", "a number"),
        ] {
            let (status, errors) = try Self.refusal(arguments: [], environment: [variable: value], in: directory)
            #expect(status == Self.usageStatus)
            #expect(errors.contains(#"\#(variable) must be \#(expected), not "\#(value)""#), "\(errors)")
        }
        // The whole file is checked, even a key the environment overrides.
        let configured = try ConfiguredDirectory(#"{"port": "abc", "idle-timeout": 1.5}"#)
        let (status, errors) = try Self.refusal(
            arguments: ["--config", configured.configPath], environment: ["ENTITLED_PORT": "0"], in: configured.directory
        )
        #expect(status == Self.usageStatus)
        #expect(errors.contains(#"the key "port" in the configuration file \#(configured.configPath) must be a whole number, not the string "abc""#), "\(errors)")
    }

    @Test func aNumberGivenAsAStringInTheFileIsTakenAsTheNumber() throws {
        let configured = try ConfiguredDirectory(#"{"port": "0", "idle-timeout": "2.5", "socket-mode": 660, "socket": "e.sock"}"#)
        let (settings, _) = try Self.startingSettings(arguments: ["--config", configured.configPath], in: configured.directory)
        #expect(settings["tcp"] == "127.0.0.1:0")
        #expect(settings["idleTimeout"] == "2.5s")
        #expect(settings["socket"] == "e.sock (mode 660)")
    }

    @Test func helpWorksEvenWhenTheConfigVariableNamesABrokenFile() throws {
        let directory = try TemporaryDirectory()
        let help = ServerProcess(
            arguments: ["--help"],
            workingDirectory: directory.path,
            environment: ["ENTITLED_CONFIG": directory.path + "/missing.json", "ENTITLED_NO_TCP": "maybe"]
        )
        #expect(try help.runToExit() == 0)
        let text = help.standardOutputText()
        #expect(text.contains("--config <file>"))
        #expect(text.contains("ENTITLED_CONFIG"))
    }

    // MARK: - Unknown variables

    @Test func anUnknownEntitledVariableIsWarnedAboutAndTheServerStartsAnyway() throws {
        let directory = try TemporaryDirectory()
        let (settings, log) = try Self.startingSettings(
            arguments: ["--port", "0"],
            environment: ["ENTITLED_PROT": "7118", "ENTITLED_SHINY": "1", "ENTITLED_TOKEN": "secret-token-1234", "ENTITLED_BINARY": "/x"],
            in: directory
        )
        #expect(settings["tcp"]?.hasPrefix("127.0.0.1:") == true)
        let warnings = log.split(separator: "\n").filter { $0.contains("ignoring unknown environment variables") }
        #expect(warnings.count == 1)
        let warning = try #require(warnings.first.map(String.init))
        // One JSON object, as every line of --log-format json.
        #expect((try? JSONSerialization.jsonObject(with: Data(warning.utf8))) is [String: Any])
        #expect(warning.contains("ENTITLED_PROT (did you mean ENTITLED_PORT?)"))
        #expect(warning.contains("ENTITLED_SHINY"))
        // entitlectl's token and the Python tests' binary are someone else's, silently.
        #expect(!log.contains("ENTITLED_TOKEN"))
        #expect(!log.contains("secret-token-1234"))
        #expect(!log.contains("ENTITLED_BINARY"))
    }

    @Test func knownVariablesAloneGiveNoWarning() throws {
        let directory = try TemporaryDirectory()
        let (_, log) = try Self.startingSettings(
            arguments: ["--port", "0"],
            environment: ["ENTITLED_MAX_CONNECTIONS": "9", "ENTITLED_TOKEN": "t"],
            in: directory
        )
        #expect(!log.contains("ignoring unknown"))
    }

    // MARK: - The table of keys follows the command line

    /// The long options `entitled --help` lists, against the keys the server accepts (which an unknown key's
    /// error lists): a flag added without its configuration key, or a key left after its flag is gone, fails here.
    @Test func everyLongOptionOfHelpIsAConfigurationKeyAndNothingElseIs() throws {
        let directory = try TemporaryDirectory()
        let help = ServerProcess(arguments: ["--help"], workingDirectory: directory.path)
        #expect(try help.runToExit() == 0)
        var options = Set<String>()
        for line in help.standardOutputText().split(separator: "\n") {
            // Option lines are indented two spaces; descriptions, which mention options too, further.
            if let match = line.firstMatch(of: /^  (?:-[a-zA-Z], )?--([a-z0-9][a-z0-9-]*)/) {
                options.insert(String(match.1))
            }
        }
        options.subtract(["help", "version", "config"])
        #expect(options.count >= 20, "\(options)")

        let configured = try ConfiguredDirectory(#"{"zzzz-not-an-option": 1}"#)
        let (status, errors) = try Self.refusal(arguments: ["--config", configured.configPath], in: configured.directory)
        #expect(status == Self.usageStatus)
        let list = try #require(errors.firstMatch(of: /without their dashes: ([a-z0-9, -]+)/), "\(errors)")
        let keys = Set(list.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(keys.subtracting(options).isEmpty, "keys that are no option: \(keys.subtracting(options).sorted())")
        #expect(options.subtracting(keys).isEmpty, "options without a key: \(options.subtracting(keys).sorted())")
    }

    /// The variables' names follow the keys': `ENTITLED_` and the name upper-cased, `-` as `_`.
    @Test func theVariableOfEachValueKeyReachesItsSetting() throws {
        let directory = try TemporaryDirectory()
        // Values the server accepts and that keep it on loopback; the TLS and auth files are left out (they
        // need real files) but their variables' names are covered by the help test's key list.
        let environment = [
            "ENTITLED_HOST": "127.0.0.1", "ENTITLED_SNAPSHOT_INTERVAL": "0", "ENTITLED_FSYNC": "no",
            "ENTITLED_MAX_LINE_LENGTH": "1000", "ENTITLED_EVENT_LOOPS": "1", "ENTITLED_BUSY_POLL": "0",
            "ENTITLED_LOG_LEVEL": "info", "ENTITLED_IDLE_TIMEOUT": "7", "ENTITLED_MAX_REQUESTS_PER_TURN": "3",
            "ENTITLED_SHUTDOWN_TIMEOUT": "2", "ENTITLED_SOCKET": directory.path + "/e.sock", "ENTITLED_SOCKET_MODE": "660",
            "ENTITLED_MIN_SEQ_WAIT": "750", "ENTITLED_TRANSFER_RULE": "keep",
        ]
        let (settings, log) = try Self.startingSettings(arguments: ["--port", "0"], environment: environment, in: directory)
        #expect(!log.contains("ignoring unknown"))
        #expect(settings["fsync"] == "no")
        #expect(settings["eventLoops"] == "1")
        #expect(settings["maxLineLength"] == "1000")
        #expect(settings["idleTimeout"] == "7.0s")
        #expect(settings["maxRequestsPerTurn"] == "3")
        #expect(settings["shutdownTimeout"] == "2.0s")
        #expect(settings["minSeqWait"] == "750ms")
        #expect(settings["transferRule"] == "keep")
        #expect(settings["snapshotInterval"] == "0s")
        #expect(settings["socket"] == "\(directory.path)/e.sock (mode 660)")
    }
}
