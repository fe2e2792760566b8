/// A table of text with aligned columns: a header row, then one row per item. Cells may be decorated
/// (colored) after their width is measured, so colors never break the alignment.
public struct TextTable: Sendable {
    public struct Cell: Sendable {
        public var text: String
        /// Applied to the padded text; the identity when output is plain.
        public var decorate: @Sendable (String) -> String

        public init(_ text: String, decorate: @escaping @Sendable (String) -> String = { $0 }) {
            self.text = text
            self.decorate = decorate
        }
    }

    public var headers: [String]
    public var rows: [[Cell]] = []

    public init(headers: [String]) {
        self.headers = headers
    }

    public mutating func append(_ row: [Cell]) {
        rows.append(row)
    }

    /// The table as lines, columns separated by two spaces, with no spaces at the end of a line; no header
    /// line when there are no headers. A row
    /// with more cells than there are headers gets unnamed columns.
    public func render(style: TextStyle) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() {
                if column == widths.count { widths.append(0) }
                widths[column] = max(widths[column], cell.text.count)
            }
        }
        func line(_ cells: [Cell]) -> String {
            // Cells after the last non-empty one would only add padding at the end of the line.
            let last = cells.lastIndex { !$0.text.isEmpty } ?? -1
            var parts: [String] = []
            for (column, cell) in cells.enumerated() where column <= last {
                let padding = column == last ? "" : String(repeating: " ", count: widths[column] - cell.text.count)
                parts.append(cell.decorate(cell.text) + padding)
            }
            return parts.joined(separator: "  ")
        }
        let headerCells = headers.map { header in Cell(header, decorate: { style.bold($0) }) }
        // A table without headers (name/value lines) has no header line.
        return ((headers.isEmpty ? [] : [line(headerCells)]) + rows.map(line)).joined(separator: "\n")
    }
}
