/// The options of one command line, each read once by its kind and checked: what a parse function asks
/// for by key (`options[.reason]`, `options.count(.limit)`), instead of taking its words one by one.
struct CommandOptions {
    /// A value read by its option's kind.
    enum Value: Equatable {
        /// A `.text` option as typed, or a `.time` one as the request sends it.
        case text(String)
        case count(Int)
        case flag(Bool)
    }

    private var values: [ConsoleOption: Value] = [:]

    init() {}

    /// The value of a `.text` or `.time` option; `nil` when it was not given.
    subscript(option: ConsoleOption) -> String? {
        assert(option.kind == .text || option.kind == .time, "\(option)= is read with count(_:) or flag(_:)")
        guard case .text(let text)? = values[option] else { return nil }
        return text
    }

    /// The value of a `.count` option; `nil` when it was not given.
    func count(_ option: ConsoleOption) -> Int? {
        guard case .count(let count)? = values[option] else { return nil }
        return count
    }

    /// The value of a `.flag` option; `nil` when it was not given.
    func flag(_ option: ConsoleOption) -> Bool? {
        guard case .flag(let flag)? = values[option] else { return nil }
        return flag
    }

    mutating func set(_ option: ConsoleOption, _ value: Value?) {
        values[option] = value
    }
}
