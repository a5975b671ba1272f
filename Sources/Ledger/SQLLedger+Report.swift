import Facts
import Ingest

extension SQLLedger {
    /// Streams every subscription's facts, Google chains joined (see ``LedgerStore/forEachSubscription(_:)``).
    ///
    /// First the chain root of every linked subject goes into the session's `chain_roots` table, then one
    /// ordered query walks all facts, and a group is handed to `body` as soon as the next group starts: memory
    /// holds one subscription and the links, not the ledger.
    public func forEachSubscription(_ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws {
        try loadChainRoots(try chainRoots())
        var current: (platform: Platform, id: String)?
        var group: [Fact] = []
        var failure: (any Error)?
        try eachRow(LedgerSchema.factsBySubscription, []) { row throws(LedgerError) in
            guard failure == nil else { return }
            let fact = try fact(row, platform: 0, subject: 2, from: 3)
            let id = try row.requiredText(1)
            if let open = current, open.platform != fact.platform || open.id != id {
                do { try body(open.platform, open.id, group) } catch { failure = error }
                group.removeAll(keepingCapacity: true)
            }
            current = (fact.platform, id)
            group.append(fact)
        }
        if let failure { throw failure }
        if let open = current { try body(open.platform, open.id, group) }
    }

    /// Subject → first subject of its chain, for every subject with a `link` fact (Google `linkedPurchaseToken`).
    ///
    /// The walk follows each subject's predecessor (the smallest `ref` its links state, so the chain is
    /// deterministic) until a subject without one. Archives can be inconsistent, so a cycle (a → b → a) is cut:
    /// its subjects all take the smallest subject of the cycle as root, which does not depend on where the walk
    /// entered the cycle.
    func chainRoots() throws(LedgerError) -> [ChainRoot] {
        var predecessors: [ChainRoot.Subject: String] = [:]
        try eachRow(LedgerSchema.linkPredecessors, []) { row throws(LedgerError) in
            predecessors[ChainRoot.Subject(platform: try row.requiredText(0), subject: try row.requiredText(1))] = try row.requiredText(2)
        }
        return predecessors.keys.sorted { ($0.platform, $0.subject) < ($1.platform, $1.subject) }.map { start in
            var chain = [start.subject]
            var seen: Set<String> = [start.subject]
            var root = start.subject
            while true {
                guard let previous = predecessors[ChainRoot.Subject(platform: start.platform, subject: chain[chain.count - 1])] else {
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
            return ChainRoot(subject: start, root: root)
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
}
