import Configuration
import EntitledConfiguration
import EntitledTestSupport
import Foundation
import Testing

/// `SettingsFile`: the configuration file is one JSON object of known keys, each once and of its key's
/// type; every refusal names the file and the key, or says where the text stops being JSON.
@Suite struct SettingsFileTests {
    let table = ExampleSettings.table

    func read(_ text: String) throws(SettingsError) -> (SettingsFile, path: String) {
        let directory: TemporaryDirectory
        let path: String
        do {
            directory = try TemporaryDirectory()
            path = try ExampleSettings.file(text, in: directory)
        } catch {
            preconditionFailure("cannot write a test file: \(error)")
        }
        return (try SettingsFile(path: path, table: table), path)
    }

    func refusal(_ text: String) -> SettingsError? {
        ExampleSettings.error { _ = try read(text) }
    }

    @Test func eachValueIsReadAsItsKeysKind() throws {
        let (file, _) = try read(#"{"port": "7117", "data-dir": "/data", "socket-mode": 660, "insecure-no-auth": false, "idle-timeout": 3, "webhook-secret": "s"}"#)
        func value(_ name: String) -> ConfigContent? { file.values[AbsoluteConfigKey(ConfigKey(name))]?.content }
        #expect(value("port") == .int(7117), "a string of a whole number")
        #expect(value("data-dir") == .string("/data"))
        #expect(value("socket-mode") == .string("660"), "a number taken as its text")
        #expect(value("insecure-no-auth") == .bool(false))
        #expect(value("idle-timeout") == .double(3))
        #expect(value("webhook-secret") == .stringArray(["s"]))
        #expect(file.values[AbsoluteConfigKey(ConfigKey("webhook-secret"))]?.isSecret == true)
    }

    @Test func anUnknownKeyIsRefusedNamingItTheClosestKeyAndEveryKey() {
        let error = refusal(#"{"prot": 7117}"#)
        #expect(error?.code == "config_unknown_key")
        #expect(error?.message.contains(#"unknown key "prot" in the configuration file "#) == true)
        #expect(error?.message.contains(#"did you mean "port"?"#) == true)
        #expect(error?.message.hasSuffix("The keys are the long flag names without their dashes: data-dir, idle-timeout, insecure-no-auth, port, socket-mode, webhook-secret") == true)
    }

    @Test func ofSeveralUnknownKeysTheFirstInSortedOrderIsNamed() {
        guard case .unknownKey(_, let key, _, _, _)? = refusal(#"{"zzz": 1, "aaa": 2, "mmm": 3}"#) else {
            Issue.record("not refused as an unknown key")
            return
        }
        #expect(key == "aaa")
    }

    @Test func aRepeatedKeyIsRefusedNamingItEvenWithTheSameValueTwice() throws {
        let error = refusal("{\"port\": 7117,\n \"port\": 7117}")
        guard case .repeatedKey(let path, let key)? = error else {
            Issue.record("not refused as a repeated key: \(String(describing: error))")
            return
        }
        #expect(key == "port")
        #expect(error?.message == "the key \"port\" is given more than once in the configuration file \(path); keep one")
        // Inside a nested object a key may come again: only the top level's keys are settings.
        #expect(refusal(#"{"port": {"a": 1, "a": 2}}"#)?.code == "config_wrong_type")
    }

    @Test func configInsideTheFileIsRefused() {
        #expect(refusal(#"{"config": "/etc/other.json"}"#)?.code == "config_nested")
    }

    @Test(arguments: [
        (#"{"port": 71.5}"#, "port", "a whole number", "the number 71.5"),
        (#"{"port": "seven"}"#, "port", "a whole number", "the string \"seven\""),
        (#"{"insecure-no-auth": "true"}"#, "insecure-no-auth", "true or false", "the string \"true\""),
        (#"{"data-dir": null}"#, "data-dir", "a string or a number", "null"),
        (#"{"data-dir": ["/a"]}"#, "data-dir", "a string or a number", "a list"),
        (#"{"webhook-secret": []}"#, "webhook-secret", "a string or a list of strings", "a list"),
        (#"{"webhook-secret": ["a", 1]}"#, "webhook-secret", "a string or a list of strings", "a list"),
    ])
    func aValueOfTheWrongTypeIsRefusedSayingWhatTheKeyTakesAndWhatWasFound(text: String, key: String, expected: String, found: String) {
        guard case .wrongType(_, let refusedKey, let refusedExpected, let refusedFound)? = refusal(text) else {
            Issue.record("\(text) not refused as a wrong type")
            return
        }
        #expect((refusedKey, refusedExpected, refusedFound) == (key, expected, found))
    }

    @Test(arguments: [
        ("{\n  \"port\": 7117,\n}", "line 3, column 1: a comma before } (JSON allows no trailing comma)"),
        ("{\"port\": 7117} // the port", "line 1, column 16: JSON allows no comments"),
        ("{'port': 7117}", "line 1, column 2: keys take double quotes, not single ones"),
        ("{\"insecure-no-auth\": ture}", "line 1, column 22: expected true (in lower case, without quotes)"),
        ("", "line 1, column 1: the file holds no JSON value"),
    ])
    func textThatIsNotJSONIsRefusedSayingWhereAndWhy(text: String, reason: String) {
        guard case .invalidJSON(_, let refusedReason)? = refusal(text) else {
            Issue.record("\(text) not refused as invalid JSON")
            return
        }
        #expect(refusedReason == reason)
    }

    @Test(arguments: [("[1]", "a list"), ("7117", "the number 7117"), ("\"port\"", "the string \"port\"")])
    func jsonThatIsNotOneObjectIsRefusedWithTheProgramsExample(text: String, found: String) {
        guard case .notAnObject(_, let refusedFound, let example)? = refusal(text) else {
            Issue.record("\(text) not refused as not an object")
            return
        }
        #expect(refusedFound == found)
        #expect(example == table.fileExample)
    }

    @Test func aDirectoryAMissingFileAndAFileOverOneMebibyteAreRefusedWithTheReason() throws {
        let directory = try TemporaryDirectory()
        #expect(ExampleSettings.error { _ = try SettingsFile(path: directory.path, table: table) } == .unreadable(path: directory.path, reason: "it is a directory"))
        let missing = directory.path + "/missing.json"
        #expect(ExampleSettings.error { _ = try SettingsFile(path: missing, table: table) } == .unreadable(path: missing, reason: "No such file or directory"))
        let large = try ExampleSettings.file("{\"data-dir\": \"" + String(repeating: "x", count: 1024 * 1024) + "\"}", in: directory)
        let error = ExampleSettings.error { _ = try SettingsFile(path: large, table: table) }
        #expect(error?.code == "config_too_large")
        #expect(error?.message == "the configuration file \(large) is larger than 1024 KiB; is it the right file?")
    }

    @Test func everyRefusalHasItsOwnCode() {
        let errors: [SettingsError] = [
            .unreadable(path: "p", reason: "r"), .tooLarge(path: "p", limit: 1), .invalidJSON(path: "p", reason: "r"),
            .notAnObject(path: "p", found: "f", example: "e"), .repeatedKey(path: "p", key: "k"),
            .unknownKey(path: "p", key: "k", suggestion: nil, known: [], keyWording: "w"), .nestedConfiguration(path: "p"),
            .wrongType(path: "p", key: "k", expected: "e", found: "f"), .invalidEnvironmentFlag(variable: "V", value: "v"),
            .invalidEnvironmentNumber(variable: "V", value: "v", expected: "e"),
        ]
        #expect(Set(errors.map(\.code)).count == errors.count)
        #expect(errors.allSatisfy { $0.code.hasPrefix("config_") && $0.description == $0.message })
    }
}
