import EntitledConsole
import Testing

/// Aligned columns: each as wide as its widest cell, two spaces apart, the last one never padded.
@Suite struct TextTableTests {
    @Test func columnsAreAsWideAsTheirWidestCellAndTwoSpacesApart() {
        var table = TextTable(headers: ["ID", "NAME", "NOTE"])
        table.append([.init("1"), .init("alice"), .init("first")])
        table.append([.init("1234"), .init("bo"), .init("x")])
        #expect(
            table.render(style: .plain) == """
                ID    NAME   NOTE
                1     alice  first
                1234  bo     x
                """
        )
    }

    @Test func aWideHeaderSetsTheColumnWidth() {
        var table = TextTable(headers: ["ENTITLEMENT", "PRODUCTS"])
        table.append([.init("pro"), .init("p1")])
        #expect(table.render(style: .plain) == "ENTITLEMENT  PRODUCTS\npro          p1")
    }

    @Test func theLastColumnIsNotPaddedSoLinesHaveNoTrailingSpaces() {
        var table = TextTable(headers: ["A", "LONG HEADER"])
        table.append([.init("x"), .init("y")])
        let lines = table.render(style: .plain).split(separator: "\n")
        #expect(lines == ["A  LONG HEADER", "x  y"])
    }

    @Test func emptyCellsAtTheEndOfARowLeaveNoTrailingSpaces() {
        var table = TextTable(headers: ["A", "B", "C"])
        table.append([.init("long value"), .init(""), .init("")])
        table.append([.init("x"), .init("y"), .init("z")])
        #expect(table.render(style: .plain) == "A           B  C\nlong value\nx           y  z")
    }

    @Test func aRowWithMoreCellsThanHeadersGetsUnnamedColumns() {
        var table = TextTable(headers: ["A"])
        table.append([.init("x"), .init("extra"), .init("more")])
        table.append([.init("wide"), .init("e")])
        #expect(table.render(style: .plain) == "A\nx     extra  more\nwide  e")
    }

    @Test func aTableWithoutRowsIsItsHeaderLine() {
        #expect(TextTable(headers: ["ID", "PRODUCT"]).render(style: .plain) == "ID  PRODUCT")
    }

    @Test func widthsCountCharactersNotBytes() {
        var table = TextTable(headers: ["N", "V"])
        table.append([.init("café"), .init("1")])
        table.append([.init("ab"), .init("2")])
        #expect(table.render(style: .plain) == "N     V\ncafé  1\nab    2")
    }

    @Test func colorWrapsTheTextAndThePaddingStaysOutsideSoColumnsStillAlign() {
        let style = TextStyle(usesColor: true)
        var table = TextTable(headers: ["STATUS", "ID"])
        table.append([.init("ok", decorate: { style.green($0) }), .init("1")])
        #expect(
            table.render(style: style)
                == "\u{1B}[1mSTATUS\u{1B}[0m  \u{1B}[1mID\u{1B}[0m\n\u{1B}[32mok\u{1B}[0m      1"
        )
    }

    @Test func plainStyleAddsNoEscapeCodes() {
        let style = TextStyle.plain
        #expect(style.green("a") + style.red("b") + style.yellow("c") + style.dim("d") + style.bold("e") == "abcde")
        let colored = TextStyle(usesColor: true)
        #expect(colored.red("x") == "\u{1B}[31mx\u{1B}[0m")
        #expect(colored.yellow("x") == "\u{1B}[33mx\u{1B}[0m")
        #expect(colored.dim("x") == "\u{1B}[2mx\u{1B}[0m")
    }
}
