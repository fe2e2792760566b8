/// One value of the configuration file, as JSON typed it. Lists, objects and `null` are decoded too, so that
/// the error can say what was found instead of a decoder's generic type mismatch.
enum SettingsFileValue: Sendable, Hashable, Decodable {
    case boolean(Bool)
    case integer(Int)
    /// A number with a fraction, or beyond `Int`: passed on as written, for the parser to refuse where it
    /// needs an integer.
    case number(Double)
    case string(String)
    case null
    /// A list, with its strings when every element is one (what a list of secrets needs), else `nil`.
    case list(strings: [String]?)
    case object

    init(from decoder: any Decoder) throws {
        // A keyed or unkeyed container only exists for objects and lists; a single value container for the rest.
        if (try? decoder.container(keyedBy: AnyKey.self)) != nil {
            self = .object
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var strings: [String]? = []
            while !list.isAtEnd {
                let element = try list.decode(SettingsFileValue.self)
                if case .string(let text) = element { strings?.append(text) } else { strings = nil }
            }
            self = .list(strings: strings)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let boolean = try? container.decode(Bool.self) {
            // Before the numbers: JSON's true/false are never decoded as 1/0, but stay explicit about the order.
            self = .boolean(boolean)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// The value as it reads in an error message: `true`, `a list`, `the string "660"`.
    var description: String {
        switch self {
        case .boolean(let value): "\(value)"
        case .integer(let value): "the number \(value)"
        case .number(let value): "the number \(value)"
        case .string(let value): "the string \"\(value)\""
        case .null: "null"
        case .list: "a list"
        case .object: "an object"
        }
    }

    /// Any key of an object: only asked for to tell an object apart.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
