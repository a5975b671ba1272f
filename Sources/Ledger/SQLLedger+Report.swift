import Facts
import Ingest

extension SQLLedger {
    /// Streams the subscriptions of the bucket ranges `nextRange` hands out, each with all its facts, Google
    /// chains joined under their first subject (see ``LedgerStore/forEachSubscription(inRanges:_:)``).
    ///
    /// First the chain root of every linked subject goes into the session's `chain_roots` table, once; then two
    /// scans per range hand over the subscriptions: those of no chain in primary-key order, then the chains whose
    /// first subject is in the range. A group is handed to `body` as soon as the next one starts, its facts sorted as the
    /// history builders expect: memory holds one subscription and the links, not the ledger.
    public func forEachSubscription(inRanges nextRange: () -> ClosedRange<Int>?,
                                    _ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws {
        // A thread that finds every range taken reads no chains.
        guard var buckets = nextRange() else { return }
        try loadChainRoots(try chainRoots())
        while true {
            try handSubscriptions(inBuckets: [.integer(Int64(buckets.lowerBound)), .integer(Int64(buckets.upperBound))], body)
            guard let next = nextRange() else { return }
            buckets = next
        }
    }

    /// The subscriptions of one range of buckets (its bounds as the queries' values), the chain roots loaded.
    private func handSubscriptions(inBuckets range: [SQLValue],
                                   _ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws {
        for sql in [LedgerSchema.unchainedFacts, LedgerSchema.chainedFacts] {
            var current: (platform: Platform, id: String)?
            var group: [Fact] = []
            var failure: (any Error)?
            func hand(_ open: (platform: Platform, id: String)) {
                group.sortInPlace(by: Fact.precedesInHistory)
                do { try body(open.platform, open.id, group) } catch { failure = error }
                group.removeAll(keepingCapacity: true)
            }
            try eachRow(sql, range) { row throws(LedgerError) in
                guard failure == nil else { return }
                let fact = try fact(row, platform: 0, subject: 2, from: 3)
                let id = try row.requiredText(1)
                if let open = current, open.platform != fact.platform || open.id != id { hand(open) }
                current = (fact.platform, id)
                group.append(fact)
            }
            if failure == nil, let open = current { hand(open) }
            if let failure { throw failure }
        }
    }

    /// Subject → first subject of its chain, for every subject with a `link` fact (Google `linkedPurchaseToken`)
    /// and for every first subject of such a chain (its own root).
    ///
    /// The walk follows each subject's predecessor (the smallest `ref` its links state, so the chain is
    /// deterministic) until a subject without one. Archives can be inconsistent, so a cycle (a → b → a) is cut:
    /// its subjects all take the smallest subject of the cycle as root, which does not depend on where the walk
    /// entered the cycle. Every subject a walk passes shares its root, so a walk stops at a subject whose root an
    /// earlier one found: each subject is walked once (a chain of 16,000 tokens took 48 s walked from each).
    func chainRoots() throws(LedgerError) -> [ChainRoot] {
        var predecessors: [ChainRoot.Subject: String] = [:]
        try eachRow(LedgerSchema.linkPredecessors, []) { row throws(LedgerError) in
            predecessors[ChainRoot.Subject(platform: try row.requiredText(0), subject: try row.requiredText(1))] = try row.requiredText(2)
        }
        var roots: [ChainRoot.Subject: String] = [:]
        for start in predecessors.keys where roots[start] == nil {
            var chain = [start.subject]
            var seen: Set<String> = [start.subject]
            var root = start.subject
            while true {
                let last = ChainRoot.Subject(platform: start.platform, subject: chain[chain.count - 1])
                if let known = roots[last] {
                    root = known
                    break
                }
                guard let previous = predecessors[last] else {
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
            for subject in chain { roots[ChainRoot.Subject(platform: start.platform, subject: subject)] = root }
            roots[ChainRoot.Subject(platform: start.platform, subject: root)] = root
        }
        return roots.sorted { ($0.key.platform, $0.key.subject) < ($1.key.platform, $1.key.subject) }.map { entry in
            ChainRoot(subject: entry.key, root: entry.value)
        }
    }
}

/// The first subject of a chain of linked subjects (Google purchase tokens joined by `linkedPurchaseToken`).
struct ChainRoot: Sendable {
    struct Subject: Hashable, Sendable {
        var platform: String
        var subject: String
    }

    var subject: Subject
    var root: String

    /// The buckets of the subject and of the root.
    var buckets: (subject: Int, root: Int) {
        (LedgerBucket.of(platform: subject.platform, subject: subject.subject),
         LedgerBucket.of(platform: subject.platform, subject: root))
    }
}

extension Fact {
    /// The order of a subscription's facts that history builders read: by instant, kind, statement time and
    /// reference, then every other column, so that the order is total and the same in either engine.
    /// It reads the two facts where they lie, for ``Swift/Array/sortInPlace(by:)``.
    static func precedesInHistory(_ a: UnsafePointer<Fact>, _ b: UnsafePointer<Fact>) -> Bool {
        if a.pointee.at != b.pointee.at { return a.pointee.at < b.pointee.at }
        if a.pointee.kind != b.pointee.kind {
            return a.pointee.kind.rawValue.utf8.lexicographicallyPrecedes(b.pointee.kind.rawValue.utf8)
        }
        if a.pointee.observedAt != b.pointee.observedAt { return a.pointee.observedAt < b.pointee.observedAt }
        if let order = Self.order(a.pointee.ref, b.pointee.ref) { return order }
        if let order = Self.order(a.pointee.subject, b.pointee.subject) { return order }
        if let order = Self.order(a.pointee.detail, b.pointee.detail) { return order }
        if let order = Self.order(a.pointee.productId, b.pointee.productId) { return order }
        if a.pointee.end != b.pointee.end { return (a.pointee.end ?? .min) < (b.pointee.end ?? .min) }
        if a.pointee.amountMicros != b.pointee.amountMicros {
            return (a.pointee.amountMicros ?? .min) < (b.pointee.amountMicros ?? .min)
        }
        if let order = Self.order(a.pointee.currency, b.pointee.currency) { return order }
        return a.pointee.flags.rawValue < b.pointee.flags.rawValue
    }

    /// Byte order with NULL first, as SQL sorts it; `nil` when equal.
    private static func order(_ a: String?, _ b: String?) -> Bool? {
        switch (a, b) {
        case (nil, nil): return nil
        case (nil, _): return true
        case (_, nil): return false
        case let (a?, b?): return a == b ? nil : a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }
}
