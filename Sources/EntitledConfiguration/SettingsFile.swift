// FoundationEssentials, not Foundation: only its JSONDecoder is needed, and it links no ICU (full
// Foundation does, and valgrind crashes on ICU; see EntitledStorage's Threading.swift).
import Configuration
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The configuration file of `--config FILE` or `ENTITLED_CONFIG` (`ENTITLED_STORES_CONFIG`): one JSON object
/// whose keys are the long option names without their dashes, `{"port": 7117, "data-dir": "/var/lib/entitled",
/// "insecure-no-auth": true}`.
///
/// Reading it checks every key against the program's `SettingTable` and the JSON type of every value, so a
/// typo stops the start with a message naming the file and the key; whether a value is acceptable (a port in
/// range, a known log level) is checked once the sources are layered, as for an option.
///
/// Read here rather than by swift-configuration's `FileProvider<JSONSnapshot>`, whose values then go to the
/// library as an `InMemoryProvider`: the library's JSON snapshot takes any key (a typo would be ignored),
/// keeps one of two repeated keys without a word, says nothing of where the text stops being JSON, reads a
/// file of any size, and needs full Foundation (see Package.swift).
public struct SettingsFile: Sendable {
    /// More than any configuration file needs; a bound so that a wrong path (a log, a device) is refused
    /// instead of read without end.
    static let sizeLimit = 1024 * 1024

    /// The path as given: relative paths, in the file as on the command line, are relative to the working directory.
    public let path: String
    /// The file's values, by key, typed as each key is read (flags set to `false` included).
    public let values: [AbsoluteConfigKey: ConfigValue]

    public init(path: String, table: SettingTable) throws(SettingsError) {
        self.path = path
        let bytes = try Self.contents(ofFile: path)
        // First the syntax, for a message that says where the text goes wrong and for repeated keys.
        let repeatedKeys: [String]
        do throws(SettingsFileSyntax.Problem) {
            repeatedKeys = try SettingsFileSyntax.repeatedKeys(in: bytes)
        } catch {
            throw .invalidJSON(path: path, reason: error.description)
        }
        if let key = repeatedKeys.first { throw .repeatedKey(path: path, key: key) }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let top: SettingsFileValue
        do {
            top = try decoder.decode(SettingsFileValue.self, from: data)
        } catch {
            throw .invalidJSON(path: path, reason: Self.reason(of: error))
        }
        guard top == .object else { throw .notAnObject(path: path, found: top.description, example: table.fileExample) }
        let object: [String: SettingsFileValue]
        do {
            object = try decoder.decode([String: SettingsFileValue].self, from: data)
        } catch {
            throw .invalidJSON(path: path, reason: Self.reason(of: error))
        }
        // Checked in the keys' sorted order, so that a file with several mistakes always reports the same one.
        for name in object.keys.sorted() where table.named(name) == nil {
            if name == "config" { throw .nestedConfiguration(path: path) }
            throw .unknownKey(
                path: path, key: name, suggestion: table.closest(to: name)?.name, known: table.keys.map(\.name), keyWording: table.keyWording)
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for key in table.keys {
            guard let value = object[key.name] else { continue }
            values[AbsoluteConfigKey(key.configKey)] = ConfigValue(try Self.content(of: value, for: key, in: path), isSecret: key.kind == .secrets)
        }
        self.values = values
    }

    /// The provider of the file's values, named as error notes name the file.
    public var provider: InMemoryProvider {
        InMemoryProvider(name: Self.providerName(path: path), values: values)
    }

    /// The name of a file's provider: what a note says a value came from.
    public static func providerName(path: String) -> String { "the configuration file \(path)" }

    /// A value as the type its key is read as: the file is checked whole before anything reads it, so
    /// a mistake names the file and the key whether or not a source of higher precedence overrides it.
    private static func content(of value: SettingsFileValue, for key: SettingKey, in path: String) throws(SettingsError) -> ConfigContent {
        switch (key.kind, value) {
        case (.secrets, .string(let secret)): return .stringArray([secret])
        case (.secrets, .list(let secrets?)) where !secrets.isEmpty: return .stringArray(secrets)
        case (.secrets, _): throw .wrongType(path: path, key: key.name, expected: "a string or a list of strings", found: value.description)
        case (.flag, .boolean(let isSet)): return .bool(isSet)
        case (.flag, _): throw .wrongType(path: path, key: key.name, expected: "true or false", found: value.description)
        case (.integer, .integer(let number)): return .int(number)
        case (.integer, .string(let text)):
            guard let number = Int(text) else { throw .wrongType(path: path, key: key.name, expected: "a whole number", found: value.description) }
            return .int(number)
        case (.integer, .number): throw .wrongType(path: path, key: key.name, expected: "a whole number", found: value.description)
        case (.number, .integer(let number)): return .double(Double(number))
        case (.number, .number(let number)): return .double(number)
        case (.number, .string(let text)):
            guard let number = Double(text) else { throw .wrongType(path: path, key: key.name, expected: "a number", found: value.description) }
            return .double(number)
        case (.text, .string(let text)): return .string(text)
        case (.text, .integer(let number)): return .string(String(number))
        case (.text, .number(let number)): return .string("\(number)")
        case (.integer, _), (.number, _), (.text, _):
            throw .wrongType(path: path, key: key.name, expected: "a string or a number", found: value.description)
        }
    }

    /// The file's bytes, read with the C library so that the reason of a failure is the system's own
    /// ("No such file or directory").
    private static func contents(ofFile path: String) throws(SettingsError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable(path: path, reason: "it is a directory")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > sizeLimit { throw .tooLarge(path: path, limit: sizeLimit) }
        }
        return bytes
    }

    /// The decoder's explanation, for what passes the syntax check and still fails to decode (a number
    /// beyond any `Double`, a string that is not UTF-8).
    private static func reason(of error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "\(error)" }
        if let underlying = context.underlyingError {
            return "\(underlying)"
        }
        return context.debugDescription
    }
}
