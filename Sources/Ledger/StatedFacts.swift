/// The facts a ledger connection has written since it last forgot them (staged, merged or committed), by key, with
/// the earliest time each was stated: a fact stated again later cannot change its row (``LedgerSchema/insertFact``
/// keeps the earliest statement), so it is not written again.
///
/// Why: App Store receipts and Google subscription resources repeat a subscription's whole history. The bench
/// ingest stated 1.13 million facts for 521,000 distinct ones; on SQLite, staging and merging the repeats was
/// about a fifth of the writing thread; on PostgreSQL, each went through `COPY` and an `ON CONFLICT` on the server.
/// A repeat is still written when it was stated earlier than the copy written (out-of-order deliveries), or at the
/// same millisecond by another record, whose order the insert decides.
///
/// Sound while the rows it vouches for stay: only a rollback or a statement of the ledger's own on the facts table
/// (``LedgerSchema/deleteFacts``, before a reprocess; another process reprocesses only with the ledger to itself)
/// can remove them, and both make the connection forget. Forgetting is always safe: it only writes more.
struct StatedFacts {
    /// A fact key's 16 bytes as two words: the key is unique per fact (it hashes platform and subject with the
    /// rest), as the facts table's primary key assumes.
    private struct Key: Hashable {
        let high: UInt64
        let low: UInt64
    }

    /// At most this many keys (24 bytes each, in a table at most twice as large); a new key beyond forgets them
    /// all. 262,144 by default, about 12 MB: the SQLite bench ingest's one transaction, remembering a quarter of its
    /// 521,000 facts at a time, staged 586,000 facts (528,000 when it remembered all, with 36 MB more of peak memory).
    let capacity: Int

    /// Earliest `observedAt` (ms since the epoch, UTC) written for each key.
    private var earliest: [Key: Int64] = [:]

    init(capacity: Int = 1 << 18) {
        self.capacity = capacity
    }

    /// Whether the fact of `key` stated at `observedAt` must be written, remembering it if so: `false` only when
    /// a copy stated strictly earlier was written already.
    mutating func admits(_ key: FactKey, observedAt: Int64) -> Bool {
        let key = key.bytes.withUnsafeBytes { bytes in
            Key(high: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                low: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        if earliest.count >= capacity, earliest[key] == nil { forget() }
        func write(over written: inout Int64) -> Bool {
            guard observedAt <= written else { return false }
            written = observedAt
            return true
        }
        return write(over: &earliest[key, default: observedAt])
    }

    /// Forgets every key, keeping the table's storage.
    mutating func forget() {
        earliest.removeAll(keepingCapacity: true)
    }

    /// ``forget()`` before the ledger's own statement `sql`, when it names the facts table (it may delete rows).
    mutating func forget(before sql: String) {
        if sql.contains("facts") { forget() }
    }
}
