#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's text for an `errno` value, continuing a sentence: `connection refused`.
func systemErrorText(_ code: Int32) -> String {
    String(cString: strerror(code)).lowercasedFirstLetter
}

extension String {
    /// `Connection refused` becomes `connection refused`, the way our messages continue a sentence.
    var lowercasedFirstLetter: String {
        guard let first = first else { return self }
        return first.lowercased() + dropFirst()
    }
}
