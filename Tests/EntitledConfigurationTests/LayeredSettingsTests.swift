import Configuration
import EntitledConfiguration
import EntitledTestSupport
import Foundation
import Testing

/// `LayeredSettings`: the command line over the environment over the configuration file over the default,
/// which file is read, and where a value came from.
@Suite struct LayeredSettingsTests {
    let table = ExampleSettings.table

    @Test func theCommandLineWinsOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault() throws {
        let directory = try TemporaryDirectory()
        let file = try ExampleSettings.file(#"{"port": 3}"#, in: directory)
        let environment = ["ENTITLED_PORT": "2", "ENTITLED_CONFIG": file]
        let all = try LayeredSettings(table: table, commandLine: ExampleSettings.commandLine(["port": .int(1)]), environment: environment)
        #expect(try all.integer("port") == 1)
        let noCommandLine = try LayeredSettings(table: table, commandLine: [:], environment: environment)
        #expect(try noCommandLine.integer("port") == 2)
        let fileOnly = try LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_CONFIG": file])
        #expect(try fileOnly.integer("port") == 3)
        let none = try LayeredSettings(table: table, commandLine: [:], environment: [:])
        #expect(try none.integer("port") == nil, "no source: the program's default applies")
    }

    @Test func configOnTheCommandLineIsReadInsteadOfTheVariablesFileWhichIsNotOpened() throws {
        let directory = try TemporaryDirectory()
        let chosen = try ExampleSettings.file(#"{"data-dir": "/chosen"}"#, in: directory)
        let broken = try ExampleSettings.file("not json", in: directory, named: "broken.json")
        let settings = try LayeredSettings(
            table: table, commandLine: ExampleSettings.commandLine(["config": .string(chosen)]), environment: ["ENTITLED_CONFIG": broken]
        )
        #expect(settings.configurationPath == chosen)
        #expect(settings.text("data-dir") == "/chosen")
    }

    @Test func withoutAnyFileNamedNoFileIsRead() throws {
        let settings = try LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_DATA_DIR": "/from-env"])
        #expect(settings.configurationPath == nil)
        #expect(settings.text("data-dir") == "/from-env")
    }

    @Test func aFileNamedByTheVariableThatCannotBeReadStopsTheStartNamingIt() throws {
        let error = ExampleSettings.error {
            _ = try LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_CONFIG": "/nonexistent/entitled.json"])
        }
        #expect(error?.code == "config_unreadable")
        #expect(error?.message == "cannot read the configuration file /nonexistent/entitled.json: No such file or directory")
    }

    @Test func aValueOfTheEnvironmentOrTheFileIsExplainedWithWhereItCameFromAndOneTypedIsNot() throws {
        let directory = try TemporaryDirectory()
        let file = try ExampleSettings.file(#"{"port": 70000, "socket-mode": "9"}"#, in: directory)
        let settings = try LayeredSettings(
            table: table, commandLine: ExampleSettings.commandLine(["data-dir": .string("/typed")]),
            environment: ["ENTITLED_CONFIG": file, "ENTITLED_IDLE_TIMEOUT": "2.5"]
        )
        _ = try settings.integer("port")
        _ = try settings.number("idle-timeout")
        _ = settings.text("data-dir")
        _ = settings.text("socket-mode")
        #expect(settings.origins.explanation(of: "--port must be between 0 and 65535, not 70000") == "--port came from the configuration file \(file)")
        #expect(settings.origins.explanation(of: "--idle-timeout must not be negative") == "--idle-timeout came from ENTITLED_IDLE_TIMEOUT")
        #expect(settings.origins.explanation(of: "--data-dir cannot be created") == nil, "typed on the command line: nothing to explain")
        #expect(settings.origins.explanation(of: "--socket must be a path") == nil, "--socket is not --socket-mode")
        #expect(settings.origins.outcome(of: settings.key("data-dir")) == .commandLine)
    }

    @Test(arguments: [
        ("port", "7117x", "a whole number"), ("idle-timeout", "soon", "a number"),
    ])
    func aNumbersVariableThatIsNoNumberIsRefusedNamingTheVariable(name: String, text: String, expected: String) throws {
        let variable = table.environmentVariable(of: try #require(table.named(name)))
        let settings = try LayeredSettings(table: table, commandLine: [:], environment: [variable: text])
        let error = ExampleSettings.error {
            _ = try (name == "port" ? settings.integer(name).map(Double.init) : settings.number(name))
        }
        #expect(error == .invalidEnvironmentNumber(variable: variable, value: text, expected: expected))
        #expect(error?.message == "\(variable) must be \(expected), not \"\(text)\"")
    }

    @Test func aFlagFromAnySourceReadsAsSetAndUnsetReadsAsFalse() throws {
        let directory = try TemporaryDirectory()
        let file = try ExampleSettings.file(#"{"insecure-no-auth": true}"#, in: directory)
        #expect(try LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_CONFIG": file]).flag("insecure-no-auth"))
        #expect(try LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_INSECURE_NO_AUTH": "1"]).flag("insecure-no-auth"))
        // The environment's false wins over the file's true.
        #expect(try !LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_CONFIG": file, "ENTITLED_INSECURE_NO_AUTH": "FALSE"]).flag("insecure-no-auth"))
        #expect(try !LayeredSettings(table: table, commandLine: [:], environment: [:]).flag("insecure-no-auth"))
    }

    @Test func secretsComeAsTheCommandLineRepeatsThemTheVariableListsThemOrTheFileGivesThemWithEmptyOnesDropped() throws {
        let directory = try TemporaryDirectory()
        let file = try ExampleSettings.file(#"{"webhook-secret": ["from-file-1", "", "from-file-2"]}"#, in: directory)
        let typed = ExampleSettings.commandLine(["webhook-secret": .stringArray(["typed-1", "typed-2"])])
        #expect(try LayeredSettings(table: table, commandLine: typed, environment: ["ENTITLED_CONFIG": file]).secrets("webhook-secret") == ["typed-1", "typed-2"])
        let listed = ["ENTITLED_WEBHOOK_SECRET": "variable-1,,variable-2", "ENTITLED_CONFIG": file]
        #expect(try LayeredSettings(table: table, commandLine: [:], environment: listed).secrets("webhook-secret") == ["variable-1", "variable-2"])
        #expect(try LayeredSettings(table: table, commandLine: [:], environment: ["ENTITLED_CONFIG": file]).secrets("webhook-secret") == ["from-file-1", "from-file-2"])
        #expect(try LayeredSettings(table: table, commandLine: [:], environment: [:]).secrets("webhook-secret").isEmpty)
    }
}
