import Foundation

/// Runs `body` with a new empty directory under the temporary directory, removed afterwards.
func withScratchDirectory(_ body: (String) throws -> Void) throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("entitled-storage-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try body(directory)
}
