import Foundation

/// The subcommands of a Swift command-line tool built on ArgumentParser and the long options each accepts,
/// read from its sources rather than run: what a README's command lines are checked against.
///
/// Read: every `struct T: ParsableCommand` (or `ParsableArguments`) and the `@Option`, `@Flag` and
/// `@OptionGroup` properties declared after it in its file; an option's long name is its
/// `.customLong("...")` or, as ArgumentParser spells it, its property name in kebab case (`logGrants` is
/// `--log-grants`); `inversion: .prefixedNo` adds `--no-...`. A command's name is its `commandName:` or its
/// type's name in kebab case; `defaultSubcommand:` names the one run when none is given.
struct ArgumentParserDeclarations {
    /// Per command name, the long names of its options and flags (without `--`), option groups included.
    let optionsByCommand: [String: Set<String>]
    /// The command run when the command line names none.
    let defaultCommand: String?

    /// Reads every `.swift` file in `folder` (not below it).
    init(folder: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        try self.init(sources: files.map { try String(contentsOf: $0, encoding: .utf8) })
    }

    init(sources: [String]) {
        var ownOptions: [String: Set<String>] = [:]
        var groups: [String: [String]] = [:]
        var commandNames: [String: String] = [:]
        var defaultType: String?
        for source in sources {
            let types = Self.parsableTypes(in: source)
            for (index, type) in types.enumerated() {
                let end = index + 1 < types.count ? types[index + 1].start : source.endIndex
                let body = source[type.start..<end]
                commandNames[type.name] = Self.firstCapture(#"commandName:\s*"([^"]+)""#, in: body) ?? Self.defaultCommandName(of: type.name)
                for property in Self.propertyWrappers(in: body) {
                    switch property.wrapper {
                    case "OptionGroup": if let group = property.typeName { groups[type.name, default: []].append(group) }
                    default: ownOptions[type.name, default: []].formUnion(Self.longNames(of: property))
                    }
                }
            }
            if let named = Self.firstCapture(#"defaultSubcommand:\s*(\w+)\.self"#, in: Substring(source)) { defaultType = named }
        }
        func options(of type: String, seen: Set<String> = []) -> Set<String> {
            guard !seen.contains(type) else { return [] }
            return (groups[type] ?? []).reduce(ownOptions[type] ?? []) { $0.union(options(of: $1, seen: seen.union([type]))) }
        }
        var optionsByCommand: [String: Set<String>] = [:]
        for (type, name) in commandNames { optionsByCommand[name] = options(of: type).union(["help"]) }
        self.optionsByCommand = optionsByCommand
        defaultCommand = defaultType.flatMap { commandNames[$0] }
    }

    /// ArgumentParser's kebab case of a property name: `workDir` is `work-dir`, `maxURLLength` `max-url-length`.
    static func kebabCase(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        var separateOnUppercase = true
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                if separateOnUppercase && !result.isEmpty { result += "-" }
                // "L" of "URLLength": an uppercase run ends where a lowercase letter follows the next one.
                separateOnUppercase = index + 2 < characters.count && characters[index + 1].isUppercase && characters[index + 2].isLowercase
            } else {
                separateOnUppercase = character != "-"
            }
            result += character.lowercased()
        }
        return result
    }

    private struct ParsableType {
        let name: String
        let start: String.Index
    }

    private struct PropertyWrapper {
        let wrapper: String
        /// From the `@` to the property's name, arguments included.
        let declaration: Substring
        let propertyName: String
        let typeName: String?
    }

    private static func parsableTypes(in source: String) -> [ParsableType] {
        let pattern = #/struct\s+(\w+)\s*:\s*(?:Async)?Parsable(?:Command|Arguments)\b/#
        return source.matches(of: pattern).map { ParsableType(name: String($0.output.1), start: $0.range.lowerBound) }
    }

    /// Every `@Option`, `@Flag` and `@OptionGroup` in `body` with the property it wraps.
    private static func propertyWrappers(in body: Substring) -> [PropertyWrapper] {
        let attribute = #/@(OptionGroup|Option|Flag)\b/#
        let property = #/\bvar\s+(\w+)\s*(?::\s*(\w+))?/#
        return body.matches(of: attribute).compactMap { match in
            guard let declared = body[match.range.upperBound...].firstMatch(of: property) else { return nil }
            return PropertyWrapper(
                wrapper: String(match.output.1), declaration: body[match.range.lowerBound..<declared.range.upperBound],
                propertyName: String(declared.output.1), typeName: declared.output.2.map(String.init)
            )
        }
    }

    /// The long names an `@Option` or `@Flag` declaration gives its property.
    private static func longNames(of property: PropertyWrapper) -> Set<String> {
        let declaration = property.declaration
        var names = Set(declaration.matches(of: #/\.customLong\(\s*"([^"]+)"/#).map { String($0.output.1) })
        let onlyShort = declaration.contains(#/name:\s*\.(?:short|customShort)\b/#)
        if names.isEmpty && !onlyShort { names = [kebabCase(property.propertyName)] }
        if declaration.contains(#/inversion:\s*\.prefixedNo\b/#) { names.formUnion(names.map { "no-" + $0 }) }
        if declaration.contains(#/inversion:\s*\.prefixedEnableDisable\b/#) {
            names = Set(names.flatMap { ["enable-" + $0, "disable-" + $0] })
        }
        return names
    }

    /// ArgumentParser's name for a command type without `commandName:`: `ChecksCommand` is `checks-command`.
    private static func defaultCommandName(of typeName: String) -> String {
        kebabCase(typeName)
    }

    private static func firstCapture(_ pattern: String, in text: Substring) -> String? {
        guard let regex = try? Regex<(Substring, Substring)>(pattern), let match = text.firstMatch(of: regex) else { return nil }
        return String(match.output.1)
    }
}
