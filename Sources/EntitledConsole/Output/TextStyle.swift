/// How output is decorated: ANSI colors and bold when a person reads it on a terminal, nothing when it
/// goes to a pipe or a file (or `NO_COLOR` is set), so scripts see plain text.
public struct TextStyle: Sendable, Hashable {
    public var usesColor: Bool

    public init(usesColor: Bool) {
        self.usesColor = usesColor
    }

    public static let plain = TextStyle(usesColor: false)

    public func green(_ text: String) -> String { wrap(text, "32") }
    public func red(_ text: String) -> String { wrap(text, "31") }
    public func yellow(_ text: String) -> String { wrap(text, "33") }
    public func dim(_ text: String) -> String { wrap(text, "2") }
    public func bold(_ text: String) -> String { wrap(text, "1") }

    private func wrap(_ text: String, _ code: String) -> String {
        usesColor ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
