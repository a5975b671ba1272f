import Crypto
import Facts

/// The identity of a fact in the set: the first 16 bytes of the SHA-256 of every column but `observedAt`.
/// Two records stating the same thing at different times yield one key; the ledger keeps the earliest statement.
///
/// 128 bits, not 256: the key is unique per subscription (the primary key is platform, subject, key), where a
/// collision among even millions of facts has odds far below 2⁻⁸⁰, and half the bytes keep the B-tree small.
public struct FactKey: Sendable, Hashable {
    /// The version of how facts are keyed and stored: raised whenever a change would store some fact
    /// differently, so that ledgers made before it are reprocessed.
    public static let version: Int64 = 1

    /// The key's 16 bytes, as the `fact_key` column stores them.
    public let bytes: [UInt8]

    /// The key of `fact`.
    public init(_ fact: Fact) {
        var encoder = DigestEncoder()
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
        bytes = SHA256.hash(data: encoder.bytes).withUnsafeBytes { Array($0.prefix(16)) }
    }
}

/// A fact with its ledger key. Ingest computes keys on its worker threads, so that the one thread writing the
/// ledger only writes.
public struct KeyedFact: Sendable {
    public let fact: Fact
    public let key: FactKey

    public init(_ fact: Fact) {
        self.fact = fact
        self.key = FactKey(fact)
    }
}
