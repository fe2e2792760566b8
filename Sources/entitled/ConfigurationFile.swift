// FoundationEssentials, not Foundation: only its JSONDecoder is needed, and it links no ICU (full
// Foundation does, and valgrind crashes on ICU; see EntitledStorage's Threading.swift).
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The configuration file of `--config FILE` or `ENTITLED_CONFIG`: one JSON object whose keys are the long
/// flag names without their dashes, `{"port": 7117, "data-dir": "/var/lib/entitled", "insecure-no-auth": true}`.
///
/// Reading it checks every key and the JSON type of every value, so a typo stops the start with a message
/// naming the file and the key; whether a value is acceptable (a port in range, a known log level) is left
/// to the command line's parser, which checks it exactly as it checks the flag.
struct ConfigurationFile: Sendable {
    /// More than any configuration file needs; a bound so that a wrong path (a log, a device) is refused
    /// instead of read without end.
    static let sizeLimit = 1024 * 1024

    /// The path as given: relative paths, in the file as on the command line, are relative to the working directory.
    let path: String
    /// The file's settings in `ConfigurationKey.all`'s order, flags set to `false` included.
    let settings: [ConfigurationSetting]

    init(path: String) throws(ConfigurationError) {
        self.path = path
        let bytes = try Self.contents(ofFile: path)
        // First the syntax, for a message that says where the text goes wrong and for repeated keys.
        let repeatedKeys: [String]
        do throws(ConfigurationSyntax.Problem) {
            repeatedKeys = try ConfigurationSyntax.repeatedKeys(in: bytes)
        } catch {
            throw .invalidJSON(path: path, reason: error.description)
        }
        if let key = repeatedKeys.first { throw .repeatedKey(path: path, key: key) }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let top: ConfigurationValue
        do {
            top = try decoder.decode(ConfigurationValue.self, from: data)
        } catch {
            throw .invalidJSON(path: path, reason: Self.reason(of: error))
        }
        guard top == .object else { throw .notAnObject(path: path, found: top.description) }
        let object: [String: ConfigurationValue]
        do {
            object = try decoder.decode([String: ConfigurationValue].self, from: data)
        } catch {
            throw .invalidJSON(path: path, reason: Self.reason(of: error))
        }
        // Checked in the keys' sorted order, so that a file with several mistakes always reports the same one.
        for name in object.keys.sorted() where ConfigurationKey.named(name) == nil {
            if name == "config" { throw .nestedConfiguration(path: path) }
            throw .unknownKey(path: path, key: name, suggestion: ConfigurationKey.closest(to: name)?.name)
        }
        let origin = "the configuration file \(path)"
        var settings: [ConfigurationSetting] = []
        for key in ConfigurationKey.all {
            guard let value = object[key.name] else { continue }
            switch (key.kind, value) {
            case (.flag, .boolean(let isSet)):
                settings.append(.init(key: key, value: .flag(isSet), origin: origin))
            case (.flag, _):
                throw .wrongType(path: path, key: key.name, expected: "true or false", found: value.description)
            case (.value, .string(let text)):
                settings.append(.init(key: key, value: .text(text), origin: origin))
            case (.value, .integer(let number)):
                settings.append(.init(key: key, value: .text(String(number)), origin: origin))
            case (.value, .number(let number)):
                settings.append(.init(key: key, value: .text("\(number)"), origin: origin))
            case (.value, _):
                throw .wrongType(path: path, key: key.name, expected: "a string or a number", found: value.description)
            }
        }
        self.settings = settings
    }

    /// The file's bytes, read with the C library so that the reason of a failure is the system's own
    /// ("No such file or directory").
    private static func contents(ofFile path: String) throws(ConfigurationError) -> [UInt8] {
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
