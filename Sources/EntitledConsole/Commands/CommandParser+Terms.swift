/// How long a membership lasts, as `grant`, `extend` and `event` read it: a DURATION (`30d`, `1mo`) or
/// `until TIME`.
extension CommandParser {
    /// The TIME after the word `until` (of `grant`, `extend` and `event`), as the request sends it.
    static func takeUntilTime(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> String {
        guard let time = arguments.takePositional() else {
            throw arguments.failure("until needs a TIME, such as until 2027-01-01")
        }
        return ConsoleTime.requestTime(from: time)
    }

    /// Refuses `1m`: minutes or months, which the console does not guess (a month given for a minute is
    /// a month of access nobody meant), naming both spellings.
    static func refuseAmbiguousDuration(_ term: String, _ arguments: ArgumentList) throws(ConsoleUsageError) {
        guard ConsoleTime.isMinutesOrMonths(term) else { return }
        let count = term.dropLast()
        throw arguments.failure("'\(term)' is ambiguous: \(count)min for minutes, \(count)mo for calendar months")
    }
}
