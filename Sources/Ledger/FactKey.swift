import Crypto
import Facts

/// The identity of a fact in the set: the first ``byteCount`` bytes of the SHA-256 of every column but
/// `observedAt`. Two records stating the same thing at different times yield one key; the ledger keeps the
/// earliest statement.
///
/// 128 bits, not 256: the key is unique per subscription (the primary key is platform, subject, key), where a
/// collision among even millions of facts has odds far below 2⁻⁸⁰, and half the bytes keep the B-tree small.
struct FactKey {
    static let byteCount = 16

    /// Reused across facts, so computing a key allocates nothing once the buffer has grown.
    private var encoder = DigestEncoder()

    /// The key of `fact`.
    mutating func of(_ fact: Fact) -> ArraySlice<UInt8> {
        encoder.reset()
        encoder.append(fact.platform.rawValue)
        encoder.append(fact.subject)
        encoder.append(fact.kind.rawValue)
        encoder.append(fact.at)
        encoder.append(fact.ref)
        encoder.append(fact.detail)
        encoder.append(fact.productId)
        encoder.append(fact.end)
        encoder.append(fact.amountMicros)
        encoder.append(fact.currency)
        encoder.append(Int64(fact.flags.rawValue))
        return Array(SHA256.hash(data: encoder.bytes)).prefix(Self.byteCount)
    }
}
