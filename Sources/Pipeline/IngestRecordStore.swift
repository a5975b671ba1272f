import Facts
import Ingest
import Ledger

/// The store side of ingest for one file (or for the reprocess queue): collects translated records into write
/// batches and counts where each one ended, so that `read == used + duplicate + excluded + quarantined` holds by
/// construction (every record takes exactly one branch of ``flush()``).
struct IngestRecordStore {
    let ledger: any LedgerStore
    private(set) var counts = FileCounts()
    /// Queued records that had been quarantined and are now used, excluded or a duplicate.
    private(set) var released = 0
    private var excludedByReason: [String: Int] = [:]
    private var quarantinedByReason: [String: Int] = [:]
    /// Event-time range of the facts of this file's used records (ms, UTC), as `status` defines it.
    private var firstEventAt: Millis?
    private var lastEventAt: Millis?
    /// Records added and not yet written.
    private var pending: [IngestBatchQueue.Record] = []
    /// Their bytes (``IngestBatchQueue/Record/byteCount``), which bound a write batch as their count does.
    private(set) var pendingBytes = 0

    init(ledger: any LedgerStore) {
        self.ledger = ledger
    }

    /// How many records wait for ``flush()``.
    var pendingCount: Int { pending.count }

    /// Takes one translated record; it is written by the next ``flush()``.
    mutating func add(_ record: IngestBatchQueue.Record) throws(LedgerError) {
        switch record.outcome {
        case .read, .queued:
            preconditionFailure("a worker parses and translates every record before it is stored")
        case .damaged(let message):
            throw LedgerError(kind: .corrupt, path: ledger.location, message: """
                \(message): the ledger is damaged; check it with `subledger status --verify` and restore it from a \
                backup, or ingest the archives again into a new --db
                """)
        case .quarantined, .stored:
            pending.append(record)
            pendingBytes += record.byteCount
        }
    }

    /// Writes the records taken since the last flush in one batch and counts them. A record whose dedup key is
    /// already stored is a duplicate; its facts are merged anyway (they may carry an earlier `observedAt`), which
    /// keeps the ledger independent of file order.
    mutating func flush() throws(LedgerError) {
        var stores = [self]
        try Self.flush(&stores)
        self = stores[0]
    }

    /// Writes the records every one of `stores` took since its last flush in one batch, in the stores' order
    /// (so a record's first copy is the one of the earlier store, as with one flush after another), and counts
    /// each store's. One write for several small files spares a round of statements per file.
    static func flush(_ stores: inout [IngestRecordStore]) throws(LedgerError) {
        guard let ledger = stores.first?.ledger, stores.contains(where: { !$0.pending.isEmpty }) else { return }
        var writes: [LedgerWrite] = []
        var dequeued: [QueuedRecord.ID] = []
        var completed: [String] = []
        writes.reserveCapacity(stores.reduce(0) { $0 + $1.pending.count })
        for store in stores {
            for record in store.pending {
                if let key = record.completes { completed.append(key) }
                switch record.outcome {
                case .quarantined(let entry): writes.append(.quarantine(entry))
                case .stored(let stored, let facts): writes.append(.record(stored, facts))
                case .read, .queued, .damaged: preconditionFailure("only translated records are pending")
                }
                if let id = record.dequeue { dequeued.append(id) }
            }
        }
        if !completed.isEmpty { try ledger.forgetQuarantined(keys: completed) }
        let isNew = try ledger.write(writes, dequeuing: dequeued)
        var offset = 0
        for index in stores.indices {
            let count = stores[index].pending.count
            stores[index].count(isNew[offset..<(offset + count)])
            offset += count
        }
    }

    /// Counts the pending records by whether their write was new, and empties the pending list.
    private mutating func count(_ isNew: ArraySlice<Bool>) {
        for (record, new) in zip(pending, isNew) {
            counts.read += 1
            switch record.outcome {
            case .quarantined(let entry):
                if new {
                    counts.quarantined += 1
                    quarantinedByReason[entry.reason, default: 0] += 1
                } else {
                    // The same bad record of the same place, quarantined by an earlier read of it.
                    counts.duplicate += 1
                }
            case .stored(let stored, let facts):
                // The event range is the used records' (an excluded one states only a test purchase's marker).
                for keyed in facts where stored.outcome == .used {
                    firstEventAt = min(firstEventAt ?? keyed.fact.at, keyed.fact.at)
                    lastEventAt = max(lastEventAt ?? keyed.fact.observedAt, keyed.fact.observedAt)
                }
                switch (new, stored.outcome) {
                case (false, _): counts.duplicate += 1
                case (true, .used): counts.used += 1
                case (true, .excluded(let reason)):
                    counts.excluded += 1
                    excludedByReason[reason.rawValue, default: 0] += 1
                }
                if record.dequeue?.origin == .quarantine { released += 1 }
            case .read, .queued, .damaged:
                break
            }
        }
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }

    /// Adds these counts to the run's statistics.
    func add(to statistics: inout IngestStatistics) {
        statistics.read += counts.read
        statistics.used += counts.used
        statistics.duplicate += counts.duplicate
        statistics.excluded += counts.excluded
        statistics.quarantined += counts.quarantined
        statistics.excludedByReason.merge(excludedByReason, uniquingKeysWith: +)
        statistics.quarantinedByReason.merge(quarantinedByReason, uniquingKeysWith: +)
        if let firstEventAt { statistics.firstEventAt = min(statistics.firstEventAt ?? firstEventAt, firstEventAt) }
        if let lastEventAt { statistics.lastEventAt = max(statistics.lastEventAt ?? lastEventAt, lastEventAt) }
    }
}
