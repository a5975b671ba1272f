/// An unambiguous byte encoding of a tuple of optional values, fed to SHA-256 for keys and digests:
/// each value is tagged (absent / present) and length-prefixed, so `("ab", "c")` and `("a", "bc")` differ
/// and `nil` differs from `""`.
struct DigestEncoder {
    private(set) var bytes: [UInt8] = []

    mutating func append(_ value: String?) {
        guard let value else { return bytes.append(0) }
        bytes.append(1)
        appendLength(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    mutating func append(_ value: Int64?) {
        guard let value else { return bytes.append(0) }
        bytes.append(2)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(bytes value: [UInt8]) {
        bytes.append(3)
        appendLength(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    private mutating func appendLength(_ count: Int) {
        withUnsafeBytes(of: UInt64(count).littleEndian) { bytes.append(contentsOf: $0) }
    }
}
