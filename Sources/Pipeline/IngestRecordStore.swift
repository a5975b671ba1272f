import Facts
import Ingest
import Ledger

/// The store side of ingest for one file: writes each translated record, and counts where each one ended, so
/// that `read == used + duplicate + excluded + quarantined` holds by construction (every record takes exactly one
/// branch of ``add(_:)``). These are the file's counts as its records were stored; the run's used / excluded
/// totals are taken from the ledger at the end of the run (a later record may show that an earlier one was a
/// test purchase's).
struct IngestRecordStore<Store: LedgerStore> {
    let ledger: Store
    private(set) var counts = FileCounts()
    private var quarantinedByReason: [String: Int] = [:]
    /// Event-time range of the facts of this file's used records (ms, UTC), as `status` defines it.
    private var firstEventAt: Millis?
    private var lastEventAt: Millis?

    init(ledger: Store) {
        self.ledger = ledger
    }

    /// Writes one record. A record whose dedup key is already stored is a duplicate; its facts are merged
    /// anyway (they may carry an earlier `observedAt`), which keeps the ledger independent of file order.
    mutating func add(_ record: IngestBatchQueue.Record) throws(LedgerError) {
        counts.read += 1
        switch record.outcome {
        case .read:
            preconditionFailure("a worker parses and translates every record before it is stored")
        case .quarantined(let entry):
            if try ledger.quarantine(entry) {
                counts.quarantined += 1
                quarantinedByReason[entry.reason, default: 0] += 1
            } else {
                // The same bad record of the same file, quarantined by an earlier read of it.
                counts.duplicate += 1
            }
        case .stored(let stored, let facts):
            let isNew = try ledger.store(stored, keyedFacts: facts)
            for keyed in facts {
                firstEventAt = min(firstEventAt ?? keyed.fact.at, keyed.fact.at)
                lastEventAt = max(lastEventAt ?? keyed.fact.observedAt, keyed.fact.observedAt)
            }
            switch (isNew, stored.outcome) {
            case (false, _): counts.duplicate += 1
            case (true, .used): counts.used += 1
            case (true, .excluded):
                counts.excluded += 1
            }
        }
    }

    /// Adds this file's counts to the run's statistics, but used and excluded (see the type's notes).
    func add(to statistics: inout IngestStatistics) {
        statistics.read += counts.read
        statistics.duplicate += counts.duplicate
        statistics.quarantined += counts.quarantined
        statistics.quarantinedByReason.merge(quarantinedByReason, uniquingKeysWith: +)
        if let firstEventAt { statistics.firstEventAt = min(statistics.firstEventAt ?? firstEventAt, firstEventAt) }
        if let lastEventAt { statistics.lastEventAt = max(statistics.lastEventAt ?? lastEventAt, lastEventAt) }
    }
}
