import Foundation

/// The TLS tests' certificates and keys, in Tests/EntitledServerTests/Fixtures (made by its
/// make-test-certificates.sh), read by path: by the in-process TLS tests there, by the `entitled` process
/// tests, and by entitlectl's and the Python client's tests, which name the same folder.
public enum TestCertificates {
    /// The folder of the certificates, keys and the script that made them.
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("EntitledServerTests/Fixtures")

    /// A self-signed certificate valid for localhost and 127.0.0.1 until 2126.
    public static let certificate = directory.appendingPathComponent("test-tls-cert.pem").path

    /// The private key of `certificate`.
    public static let key = directory.appendingPathComponent("test-tls-key.pem").path
}
