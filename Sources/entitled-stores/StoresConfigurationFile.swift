import Configuration
import EntitledClient
import Foundation

/// The configuration file of `--config FILE` or `ENTITLED_STORES_CONFIG`: one JSON object whose keys are the
/// long option names without their dashes, `{"listen": "0.0.0.0:7118", "stripe-secret": ["whsec_..."]}`.
///
/// Checked whole when it is read, as `entitled` checks its own (../entitled/ConfigurationFile.swift), with
/// the same messages: a key that is no setting, a key given twice (which one counts would be a guess),
/// `config` in the file, a value of the wrong JSON type. Whether a value is acceptable (a port in range, a
/// known log level) is checked once the sources are layered, as for an option (`StoresSettings`).
enum StoresConfigurationFile {
    /// More than any configuration file needs: a wrong path (a log, a device) is refused instead of read.
    static let sizeLimit = 1024 * 1024

    /// The file's values by key, typed as each key is read.
    static func values(path: String) throws(StoresSettings.Failure) -> [AbsoluteConfigKey: ConfigValue] {
        let text = try text(ofFile: path)
        let top: JSONValue
        do throws(JSONParseError) {
            top = try JSONValue(parsing: text)
        } catch {
            throw .init("the configuration file \(path) is not valid JSON: \(error.reason) (byte \(error.offset))")
        }
        guard let members = top.objectMembers else {
            throw .init("the configuration file \(path) must be one JSON object such as {\"listen\": \"127.0.0.1:7118\"}, not \(describe(top))")
        }
        var names = Set<String>()
        for member in members where !names.insert(member.key).inserted {
            throw .init("the key \"\(member.key)\" is given more than once in the configuration file \(path); keep one")
        }
        // In the keys' sorted order, so that a file with several mistakes always reports the same one.
        for name in names.sorted() where StoresSettingKey.named(name) == nil {
            if name == "config" { throw .init("the configuration file \(path) cannot name another configuration file (key \"config\")") }
            throw .init(
                "unknown key \"\(name)\" in the configuration file \(path). The keys are the long option names without their dashes: "
                    + StoresSettingKey.all.map(\.name).sorted().joined(separator: ", ")
            )
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (name, value) in members {
            guard let key = StoresSettingKey.named(name) else { continue }
            values[AbsoluteConfigKey(key.configKey)] = ConfigValue(try content(of: value, for: key, in: path), isSecret: key.kind == .secrets)
        }
        return values
    }

    private static func content(of value: JSONValue, for key: StoresSettingKey, in path: String) throws(StoresSettings.Failure) -> ConfigContent {
        switch (key.kind, value) {
        case (.integer, .number(let text)), (.integer, .string(let text)):
            if let number = Int(text) { return .int(number) }
        case (.text, .string(let text)), (.text, .number(let text)):
            return .string(text)
        case (.secrets, .string(let secret)):
            return .stringArray([secret])
        case (.secrets, .array(let values)):
            let secrets = values.compactMap(\.stringValue)
            if !secrets.isEmpty, secrets.count == values.count { return .stringArray(secrets) }
        default:
            break
        }
        let expected =
            switch key.kind {
            case .integer: "a whole number"
            case .text: "a string or a number"
            case .secrets: "a string or a list of strings"
            }
        throw .init("the key \"\(key.name)\" in the configuration file \(path) must be \(expected), not \(describe(value))")
    }

    /// A value as it reads in a message: `true`, `a list`, `the string "660"`.
    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let text): "the number \(text)"
        case .string(let text): "the string \"\(text)\""
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// The file's text, read with the C library so that the reason of a failure is the system's own.
    private static func text(ofFile path: String) throws(StoresSettings.Failure) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .init("cannot read the configuration file \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .init("cannot read the configuration file \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk[0..<count]
            if bytes.count > sizeLimit { throw .init("the configuration file \(path) is larger than \(sizeLimit / 1024) KiB; is it the right file?") }
        }
    }
}
