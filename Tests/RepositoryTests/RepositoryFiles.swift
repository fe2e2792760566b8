import Foundation

/// The repository's own files: everything below the package root but hidden folders (`.git`, `.build`,
/// the CI's), which hold no document or source of ours.
enum RepositoryFiles {
    /// The files under `root` whose names end with `suffix`, sorted by path.
    static func urls(under root: URL, endingWith suffix: String) -> [URL] {
        let keys: [URLResourceKey] = [.isDirectoryKey]
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: keys) else { return [] }
        var found: [URL] = []
        for case let url as URL in walker {
            let name = url.lastPathComponent
            if name.hasPrefix(".") {
                walker.skipDescendants()
                continue
            }
            if name.hasSuffix(suffix) { found.append(url) }
        }
        return found.sorted { $0.path < $1.path }
    }
}
