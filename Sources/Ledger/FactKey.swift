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
    public static let version: Int64 = 2

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

/// A fact with its ledger key and bucket. Ingest computes both on its worker threads, so that the one thread
/// writing the ledger only writes.
public struct KeyedFact: Sendable {
    public let fact: Fact
    public let key: FactKey
    public let bucket: Int

    public init(_ fact: Fact) {
        self.fact = fact
        self.key = FactKey(fact)
        self.bucket = LedgerBucket.of(platform: fact.platform.rawValue, subject: fact.subject)
    }
}

/// Where a subject's rows live: a stable hash of (platform, subject) into `0..<count` (ledger.md, "Bucket").
/// Report slices read ranges of buckets; a distributed database places rows by it. A Google chain of linked
/// tokens spans the buckets of its tokens, and a slice takes a whole chain when the bucket of its first token
/// is in the slice's range. FNV-1a (64 bits): the same value on every machine and in every release, unlike
/// Swift's seeded `Hasher`.
public enum LedgerBucket {
    public static let count = 1024

    public static func of(platform: String, subject: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        var platform = platform
        var subject = subject
        platform.withUTF8 { for byte in $0 { mix(byte) } }
        mix(0)
        subject.withUTF8 { for byte in $0 { mix(byte) } }
        return Int(hash % UInt64(count))
    }

    /// The buckets of slice `slice` (1-based) of `slices`: contiguous ranges that cover `0..<count` once.
    public static func range(slice: Int, of slices: Int) -> ClosedRange<Int> {
        (count * (slice - 1) / slices)...(count * slice / slices - 1)
    }

    /// The ranges of every slice of `slices` (at most ``count``).
    public static func ranges(_ slices: Int) -> [ClosedRange<Int>] {
        let slices = min(max(slices, 1), count)
        return (1...slices).map { range(slice: $0, of: slices) }
    }

    /// The buckets `coverage` (sorted half-open ranges, as a merged partial state has them) leaves out.
    public static func missing(from coverage: [Range<Int>]) -> [Range<Int>] {
        var missing: [Range<Int>] = []
        var next = 0
        for range in coverage.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > next { missing.append(next..<min(range.lowerBound, count)) }
            next = max(next, range.upperBound)
        }
        if next < count { missing.append(next..<count) }
        return missing.filter { !$0.isEmpty }
    }
}
