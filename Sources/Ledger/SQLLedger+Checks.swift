import Facts
import Ingest

/// The ledger's checks, shared by both engines: the quick one every ingest and report runs when it opens the
/// ledger, and the full one of `status --verify`. Each engine adds its own structural check
/// (``SQLLedger/structuralProblems(thorough:)``); the rest is the ledger's own rules, in portable SQL.
extension SQLLedger {
    /// The engine's structural check and the tables' `CHECK` constraints (``LedgerSchema/constraintChecks``):
    /// ingest and report run it when they open the ledger, so that a damaged ledger stops them with a message
    /// before a number is taken from it or written into it.
    /// - Throws: ``LedgerError/Kind/damaged`` with what was found and how to recover.
    /// The engine's findings are its own words (pages and cells): the message counts them and the error's detail,
    /// logged with `--log-level debug`, lists them.
    public func quickCheck() throws(LedgerError) {
        let structural = try structuralProblems(thorough: false)
        guard structural.isEmpty else {
            throw LedgerError(kind: .damaged, path: location,
                              message: "the ledger is damaged (the database's own check of its file found "
                                  + "\(structural.count == 1 ? "a problem" : "\(structural.count) problems"))" + recovery,
                              detail: structural.joined(separator: "; "))
        }
        let problems = try broken(LedgerSchema.constraintChecks)
        guard problems.isEmpty else {
            let found = problems.prefix(3).joined(separator: "; ")
            throw LedgerError(kind: .damaged, path: location, message: "the ledger is damaged (\(found))" + recovery)
        }
    }

    /// Everything `status --verify` checks: the engine's thorough structural check, the `CHECK` constraints,
    /// the ledger's own invariants (``LedgerSchema/invariants``: each file's counts add up, records come from
    /// files in the manifest, ...), that every label (source, outcome, reason) is one this version writes (the
    /// sources: one of `sources`, the kinds the stores of this build read), and
    /// that every fact's key is the digest of its content, so that a changed byte in a fact shows.
    /// - Returns: the problems found, each a sentence; empty for a sound ledger.
    public func verify(sources: Set<SourceKind>) throws(LedgerError) -> [String] {
        let structural = try structuralProblems(thorough: true)
        guard structural.isEmpty else { return structural }
        var problems = try broken(LedgerSchema.constraintChecks + LedgerSchema.invariants)
        try eachRow(LedgerSchema.recordLabels, []) { row throws(LedgerError) in
            let source = try row.requiredText(0)
            let outcome = try row.requiredText(1)
            let reason = try row.text(2) ?? ""
            if SourceKind(rawValue: source).map(sources.contains) != true {
                problems.append("records have the unknown source \"\(source)\"")
            }
            if outcome == "excluded", ExclusionReason(rawValue: reason) == nil {
                problems.append("records are excluded for the unknown reason \"\(reason)\"")
            }
        }
        try eachRow(LedgerSchema.quarantineReasons, []) { row throws(LedgerError) in
            let reason = try row.requiredText(0)
            if QuarantineReason(rawValue: reason) == nil {
                problems.append("records are quarantined for the unknown reason \"\(reason)\"")
            }
        }
        var mismatched = 0
        try eachRow(LedgerSchema.allFacts, []) { row throws(LedgerError) in
            guard let platform = Platform(rawValue: try row.requiredText(1)) else {
                mismatched += 1
                return
            }
            let fact = Fact(platform: platform, subject: try row.requiredText(2),
                            kind: Fact.Kind(rawValue: try row.requiredText(3)), at: try row.requiredInteger(4),
                            observedAt: try row.requiredInteger(5), ref: try row.text(6), detail: try row.text(7),
                            productId: try row.text(8), end: try row.integer(9), amountMicros: try row.integer(10),
                            currency: try row.text(11), flags: Fact.Flags(rawValue: Int(try row.requiredInteger(12))))
            if FactKey(fact).bytes != (try row.bytes(0) ?? []) { mismatched += 1 }
        }
        if mismatched > 0 {
            problems.append("\(mismatched) fact(s) do not match their key: their content changed after they were written")
        }
        return problems
    }

    /// The rules of `checks` that some rows break, as sentences.
    private func broken(_ checks: [(rule: String, sql: String)]) throws(LedgerError) -> [String] {
        var problems: [String] = []
        for (rule, sql) in checks {
            var count: Int64 = 0
            try eachRow(sql, []) { row throws(LedgerError) in count = try row.integer(0) ?? 0 }
            if count > 0 { problems.append("\(count) row(s) break the rule: \(rule)") }
        }
        return problems
    }
}
