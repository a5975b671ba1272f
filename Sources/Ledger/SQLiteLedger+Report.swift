import Facts
import Ingest

extension SQLiteLedger {
    /// Streams every subscription's facts, Google chains joined (see ``LedgerStore/forEachSubscription(_:)``).
    ///
    /// First the chain roots of every linked subject go into a TEMP table (one row per linked subject; only
    /// one chain is in memory at a time), then one ordered query walks all facts, and a group is handed to
    /// `body` as soon as the next group starts: memory holds one subscription, not the ledger.
    public func forEachSubscription(_ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws {
        try buildChainRoots()
        let statement = try sqlite.prepare(LedgerSchema.factsBySubscription)
        var current: (platform: Platform, id: String)?
        var group: [Fact] = []
        while try statement.step() {
            guard let platform = Platform(rawValue: statement.string(0)) else {
                throw LedgerError(kind: .corrupt, path: path, message: "a fact has the unknown platform \(statement.string(0))")
            }
            let id = statement.string(1)
            if let open = current, open.platform != platform || open.id != id {
                try body(open.platform, open.id, group)
                group.removeAll(keepingCapacity: true)
            }
            current = (platform, id)
            group.append(Fact(
                platform: platform, subject: statement.string(2), kind: Fact.Kind(rawValue: statement.string(3)),
                at: statement.int64(4), observedAt: statement.int64(5), ref: statement.optionalString(6),
                detail: statement.optionalString(7), productId: statement.optionalString(8),
                end: statement.optionalInt64(9), amountMicros: statement.optionalInt64(10),
                currency: statement.optionalString(11), flags: Fact.Flags(rawValue: Int(statement.int64(12)))))
        }
        if let open = current { try body(open.platform, open.id, group) }
    }

    /// Fills `temp.chain_roots` with subject → first subject of its chain, for every subject with a `link`.
    ///
    /// The walk follows `ref` (the predecessor) until a subject without a link. Archives can be inconsistent,
    /// so a cycle (a → b → a) is cut: its subjects all take the smallest subject of the cycle as root, which
    /// does not depend on where the walk entered the cycle.
    func buildChainRoots() throws(LedgerError) {
        try sqlite.execute(LedgerSchema.createChainRoots)
        try sqlite.execute(LedgerSchema.clearChainRoots)
        let linked = try sqlite.prepare(LedgerSchema.linkedSubjects)
        let predecessor = try sqlite.prepare(LedgerSchema.predecessor)
        let insert = try sqlite.prepare(LedgerSchema.insertChainRoot)
        while try linked.step() {
            let platform = linked.string(0)
            let subject = linked.string(1)
            var chain = [subject]
            var seen: Set<String> = [subject]
            var root = subject
            while true {
                predecessor.reset()
                try predecessor.bind(1, platform)
                try predecessor.bind(2, chain[chain.count - 1])
                guard try predecessor.step(), let previous = predecessor.optionalString(0) else {
                    root = chain[chain.count - 1]
                    break
                }
                if seen.contains(previous) {
                    let cycleStart = chain.firstIndex(of: previous) ?? 0
                    root = chain[cycleStart...].min() ?? previous
                    break
                }
                chain.append(previous)
                seen.insert(previous)
            }
            predecessor.reset()
            insert.reset()
            try insert.bind(1, platform)
            try insert.bind(2, subject)
            try insert.bind(3, root)
            try insert.run()
        }
    }
}
