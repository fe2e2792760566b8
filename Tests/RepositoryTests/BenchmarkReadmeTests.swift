import Foundation
import Testing

/// The benchmarks' READMEs name only options their tools have. Their command lines are what drifts first
/// when an option is renamed or dropped, and what a reader copies: each one is checked against the tool's
/// sources (`entitled-bench`'s ArgumentParser declarations, a `bench.py`'s `add_argument` calls), without
/// building or running anything.
@Suite("Benchmark READMEs")
struct BenchmarkReadmeTests {
    @Test func everyOptionOnAnEntitledBenchCommandLineIsOneItsSubcommandDeclares() throws {
        let declarations = try ArgumentParserDeclarations(folder: Self.packageRoot.appendingPathComponent("Tools/entitled-bench"))
        #expect(declarations.optionsByCommand["checks"]?.contains("work-dir") == true, "read \(declarations.optionsByCommand)")
        var checked = 0
        var problems: [String] = []
        for document in try MarkdownDocument.all(under: Self.packageRoot) {
            let text = try String(contentsOf: document.url, encoding: .utf8)
            for commandLine in DocumentedCommandLine.all(running: "entitled-bench", in: text) {
                checked += 1
                problems += Self.problems(with: commandLine, against: declarations).map { "\(document.relativePath):\(commandLine.line): \($0)" }
            }
        }
        #expect(checked >= 8, "found only \(checked) entitled-bench command lines")
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test(arguments: ["client-bench", "stores-bench", "webhook-bench"])
    func everyOptionOnABenchPyCommandLineIsOneTheScriptDeclares(benchmark: String) throws {
        let folder = Self.packageRoot.appendingPathComponent("Tools/\(benchmark)")
        let script = try String(contentsOf: folder.appendingPathComponent("bench.py"), encoding: .utf8)
        let declared = Self.pythonLongOptions(in: script)
        let readme = try String(contentsOf: folder.appendingPathComponent("README.md"), encoding: .utf8)
        let commandLines = DocumentedCommandLine.all(running: "bench.py", in: readme).filter { !$0.words.isEmpty }
        #expect(!commandLines.isEmpty, "no bench.py command line in Tools/\(benchmark)/README.md")
        let unknown = commandLines.flatMap { commandLine in
            commandLine.longOptions.filter { !declared.contains($0) }.map { "line \(commandLine.line): --\($0)" }
        }
        #expect(unknown.isEmpty, "Tools/\(benchmark)/README.md names options bench.py does not declare (\(declared.sorted())): \(unknown)")
    }

    /// SwiftPM's `--product` takes one value, and of several the last wins: a documented
    /// `swift build --product a --product b` builds only `b`.
    @Test func noDocumentedSwiftBuildNamesTwoProducts() throws {
        var problems: [String] = []
        for document in try MarkdownDocument.all(under: Self.packageRoot) {
            let text = try String(contentsOf: document.url, encoding: .utf8)
            for commandLine in DocumentedCommandLine.all(running: "swift", in: text) where commandLine.words.first == "build" {
                if commandLine.longOptions.filter({ $0 == "product" }).count > 1 {
                    problems.append("\(document.relativePath):\(commandLine.line): \(commandLine.words.joined(separator: " "))")
                }
            }
        }
        #expect(problems.isEmpty, "only the last --product is built:\n\(problems.joined(separator: "\n"))")
    }

    @Test func aMisspelledOptionOrSubcommandIsReported() {
        let source = """
            struct Tool: ParsableCommand {
                static let configuration = CommandConfiguration(commandName: "tool", subcommands: [Run.self], defaultSubcommand: Run.self)
            }
            struct Shared: ParsableArguments {
                @Option(name: .customLong("work-dir"), help: "Where.") var directory = "/tmp"
            }
            struct Run: ParsableCommand {
                static let configuration = CommandConfiguration(commandName: "run")
                @OptionGroup var shared: Shared
                @Option(help: "Grants after the snapshot.") var logGrants = 5
                @Flag(inversion: .prefixedNo) var ceiling = true
                @Option(name: .customShort("q")) var quiet = 0
            }
            """
        let declarations = ArgumentParserDeclarations(sources: [source])
        #expect(declarations.optionsByCommand["run"] == ["work-dir", "log-grants", "ceiling", "no-ceiling", "help"])
        #expect(declarations.defaultCommand == "run")
        let markdown = """
            Run `tool run --log-grants 3 --work-dir=/x --no-ceiling` or `tool --log-grant 3`.

            ```sh
            .build/release/tool rnu --quiet \\
                --log-grants 1 | tee out
            ```
            """
        let commandLines = DocumentedCommandLine.all(running: "tool", in: markdown)
        #expect(commandLines.map(\.line) == [1, 1, 4])
        #expect(commandLines.map { Self.problems(with: $0, against: declarations) } == [[], ["--log-grant is not an option of run"], ["no subcommand rnu"]])
        #expect(commandLines[2].longOptions == ["quiet", "log-grants"])
    }

    @Test func aProgramNamedAsAnArgumentStartsNoCommandLine() {
        let markdown = "`for product in other tool; do LEVEL=1 tool run --y; done` and `python3 bin/tool --z`"
        #expect(DocumentedCommandLine.all(running: "tool", in: markdown).map(\.words) == [["run", "--y"], ["--z"]])
    }

    @Test func propertyNamesBecomeArgumentParsersKebabCase() {
        #expect(ArgumentParserDeclarations.kebabCase("workDir") == "work-dir")
        #expect(ArgumentParserDeclarations.kebabCase("logGrants") == "log-grants")
        #expect(ArgumentParserDeclarations.kebabCase("maxURLLength") == "max-url-length")
        #expect(ArgumentParserDeclarations.kebabCase("users") == "users")
    }

    /// What is wrong with `commandLine` for the tool `declarations` describe: a subcommand it does not have,
    /// or a long option its subcommand does not declare. Words such as `<command>` are placeholders.
    static func problems(with commandLine: DocumentedCommandLine, against declarations: ArgumentParserDeclarations) -> [String] {
        let first = commandLine.words.first
        let command: String
        if let first, first.wholeMatch(of: #/[a-z][a-z0-9-]*/#) != nil {
            guard declarations.optionsByCommand[first] != nil else { return ["no subcommand \(first)"] }
            command = first
        } else if first == nil || first?.hasPrefix("-") == true, let defaultCommand = declarations.defaultCommand {
            command = defaultCommand
        } else {
            return []
        }
        let declared = declarations.optionsByCommand[command] ?? []
        return commandLine.longOptions.filter { !declared.contains($0) }.map { "--\($0) is not an option of \(command)" }
    }

    /// The long options a Python script's `argparse` declares: every `"--name"` in an `add_argument(` call.
    static func pythonLongOptions(in script: String) -> Set<String> {
        var names: Set<String> = []
        for call in script.matches(of: #/add_argument\(([^)]*)/#) {
            names.formUnion(call.output.1.matches(of: #/"--([\w-]+)"/#).map { String($0.output.1) })
        }
        return names.union(["help"])
    }

    static let packageRoot = MarkdownLinkTests.packageRoot
}
