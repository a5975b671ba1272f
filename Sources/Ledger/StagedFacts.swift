/// The facts staged since the last merge (``SQLiteLedger/createStage``), by key, with the earliest time each was
/// stated: a fact stated again later cannot change the merged row (``LedgerSchema/insertFact`` keeps the earliest
/// statement), so it is not staged.
///
/// Why: App Store receipts and Google subscription resources repeat a subscription's whole history, so the bench
/// ingest staged 1.13 million facts for 521,000 distinct ones, and the writing thread spent about as long staging
/// and merging the repeats as the rest. A repeat is still staged when it was stated earlier than the staged copy
/// (out-of-order deliveries), or at the same millisecond by another record, whose order the merge decides.
///
/// Emptied with the stage (merge, rollback), so that it never vouches for a row a statement has changed since
/// (``LedgerSchema/deleteFacts`` merges the stage first). Forgetting is always safe: it only stages more.
struct StagedFacts {
    /// A fact key's 16 bytes as two words: the key is unique per fact (it hashes platform and subject with the
    /// rest), as the facts table's primary key assumes.
    private struct Key: Hashable {
        let high: UInt64
        let low: UInt64
    }

    /// At most this many keys (24 bytes each, in a table at most twice as large); a new key beyond forgets them
    /// all. 262,144 by default, about 12 MB: the bench ingest's one transaction, remembering a quarter of its
    /// 521,000 facts at a time, staged 586,000 facts (528,000 when it remembered all, with 36 MB more of peak memory).
    let capacity: Int

    /// Earliest `observedAt` (ms since the epoch, UTC) staged for each key.
    private var earliest: [Key: Int64] = [:]

    init(capacity: Int = 1 << 18) {
        self.capacity = capacity
    }

    /// Whether `fact` must be staged, recording it if so: `false` only when a copy stated strictly earlier is in
    /// the stage already.
    mutating func admits(_ fact: UnsafePointer<KeyedFact>) -> Bool {
        let key = fact.pointee.key.bytes.withUnsafeBytes { bytes in
            Key(high: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                low: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        let observedAt = fact.pointee.fact.observedAt
        if earliest.count >= capacity, earliest[key] == nil { earliest.removeAll(keepingCapacity: true) }
        func stage(over staged: inout Int64) -> Bool {
            guard observedAt <= staged else { return false }
            staged = observedAt
            return true
        }
        return stage(over: &earliest[key, default: observedAt])
    }

    /// Forgets every key, keeping the table's storage for the next transaction.
    mutating func removeAll() {
        earliest.removeAll(keepingCapacity: true)
    }
}
