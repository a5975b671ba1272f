import Facts

/// Writes the body of a partial-state file (``PartialState``): unsigned LEB128 varints, zigzag varints for signed
/// values, strings as a varint byte length and their UTF-8 bytes. Every writer of a map sorts it first, so the
/// same state always gives the same bytes.
struct PartialWriter {
    private(set) var bytes: [UInt8] = []

    /// `value` as an unsigned LEB128 varint (7 bits a byte, low bits first).
    mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// `value` zigzag-encoded (0, −1, 1, −2, … → 0, 1, 2, 3, …), so that small negatives stay short.
    mutating func signed(_ value: Int64) {
        unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A signed `Int` (counts, month numbers).
    mutating func int(_ value: Int) {
        signed(Int64(value))
    }

    /// A count of elements or bytes (≥ 0).
    mutating func count(_ value: Int) {
        unsigned(UInt64(max(0, value)))
    }

    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    mutating func platform(_ value: Platform) {
        string(value.rawValue)
    }

    /// A month number (`year × 12 + month − 1`), or `nil` written as a lone `0` flag.
    mutating func optionalMonth(_ month: Int?) {
        guard let month else { return unsigned(0) }
        unsigned(1)
        int(month)
    }

    mutating func raw(_ values: [UInt8]) {
        bytes.append(contentsOf: values)
    }
}
