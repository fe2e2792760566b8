import Foundation

/// How the tables print numbers, and how they align their columns.
enum Format {
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    /// A whole number with thin groups of three digits: 1 234 567.
    static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 && result.last != "-" { result += " " }
            result.append(character)
        }
        return result
    }

    static func mebibytes(_ bytes: Int?) -> String {
        bytes.map { "\(fixed(Double($0) / Double(1 << 20), 1)) MiB" } ?? "?"
    }

    /// `rows` as lines of columns two spaces apart, each as wide as its widest cell; a cell of a column
    /// `rightAligned` names is padded on the left.
    static func columns(_ rows: [[String]], rightAligned: (Int) -> Bool) -> [String] {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
    }
}
