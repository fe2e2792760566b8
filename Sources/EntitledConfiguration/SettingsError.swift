/// Why the configuration file or one of the program's environment variables cannot be used. Any of these
/// stops the program before it starts, as a bad option does: a server that silently ignored part of its
/// configuration would run with settings nobody chose.
public enum SettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file cannot be opened or read (missing, a directory, no permission).
    case unreadable(path: String, reason: String)
    /// The file is larger than any configuration file: probably the wrong file.
    case tooLarge(path: String, limit: Int)
    /// The file is not JSON.
    case invalidJSON(path: String, reason: String)
    /// The file is JSON, but not one object.
    case notAnObject(path: String, found: String, example: String)
    /// A key given twice: which one counts would be a guess.
    case repeatedKey(path: String, key: String)
    /// A key that is no setting of the program, with the closest known one when there is one, the known
    /// keys and how they are made (`keyWording`: "long flag names").
    case unknownKey(path: String, key: String, suggestion: String?, known: [String], keyWording: String)
    /// `config` inside the configuration file.
    case nestedConfiguration(path: String)
    /// A value of the wrong JSON type for its key: `expected` and `found` are said in words.
    case wrongType(path: String, key: String, expected: String, found: String)
    /// A flag's environment variable that is not `true`, `false`, `1` or `0`.
    case invalidEnvironmentFlag(variable: String, value: String)
    /// A number's environment variable whose text is not one: `expected` is said in words.
    case invalidEnvironmentNumber(variable: String, value: String, expected: String)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .unreadable: "config_unreadable"
        case .tooLarge: "config_too_large"
        case .invalidJSON: "config_invalid_json"
        case .notAnObject: "config_not_an_object"
        case .repeatedKey: "config_repeated_key"
        case .unknownKey: "config_unknown_key"
        case .nestedConfiguration: "config_nested"
        case .wrongType: "config_wrong_type"
        case .invalidEnvironmentFlag: "config_invalid_environment_flag"
        case .invalidEnvironmentNumber: "config_invalid_environment_number"
        }
    }

    /// A sentence a person can act on: it names the file (or the variable) and the key.
    public var message: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read the configuration file \(path): \(reason)"
        case .tooLarge(let path, let limit):
            "the configuration file \(path) is larger than \(limit / 1024) KiB; is it the right file?"
        case .invalidJSON(let path, let reason):
            "the configuration file \(path) is not valid JSON: \(reason)"
        case .notAnObject(let path, let found, let example):
            "the configuration file \(path) must be one JSON object such as \(example), not \(found)"
        case .repeatedKey(let path, let key):
            "the key \"\(key)\" is given more than once in the configuration file \(path); keep one"
        case .unknownKey(let path, let key, let suggestion, let known, let keyWording):
            "unknown key \"\(key)\" in the configuration file \(path)"
                + (suggestion.map { "; did you mean \"\($0)\"?" } ?? ".")
                + " The keys are the \(keyWording) without their dashes: "
                + known.sorted().joined(separator: ", ")
        case .nestedConfiguration(let path):
            "the configuration file \(path) cannot name another configuration file (key \"config\")"
        case .wrongType(let path, let key, let expected, let found):
            "the key \"\(key)\" in the configuration file \(path) must be \(expected), not \(found)"
        case .invalidEnvironmentFlag(let variable, let value):
            "\(variable) must be true, false, 1 or 0, not \"\(value)\""
        case .invalidEnvironmentNumber(let variable, let value, let expected):
            "\(variable) must be \(expected), not \"\(value)\""
        }
    }

    public var description: String { message }
}
