import Facts

/// The facts one record states, collected while translating; `observedAt` is set once the record's
/// statement time is known (``finish(observedAt:)``).
struct FactList {
    private(set) var facts: [Fact] = []
    /// The latest instant at which the payload says something happened (purchases, changes, cancellations,
    /// failures): the statement time of last resort. Ends (expiries, grace ends) are left out: they lie in the
    /// future of the statement, and a statement dated there would win every "later wins" merge and push the
    /// default as-of time past the data.
    private(set) var latestInstant: Millis?

    mutating func add(_ kind: Fact.Kind, subject: String, at: Millis, ref: String? = nil, detail: String? = nil,
                      productId: String? = nil, end: Millis? = nil, amountMicros: Int64? = nil,
                      currency: String? = nil, flags: Fact.Flags = []) {
        facts.append(Fact(platform: .apple, subject: subject, kind: kind, at: at, observedAt: 0, ref: ref,
                          detail: detail, productId: productId, end: end, amountMicros: amountMicros,
                          currency: currency, flags: flags))
        see(at)
    }

    /// Notes an instant of the payload for ``latestInstant``.
    mutating func see(_ instant: Millis) {
        latestInstant = max(latestInstant ?? instant, instant)
    }

    /// The distinct facts, in the order first stated, all stamped with `observedAt`. (A payload often says a
    /// thing twice, e.g. a V2 subtype and its renewal info; the ledger would merge them, the count would not.)
    func finish(observedAt: Millis) -> [Fact] {
        var seen = Set<Fact>()
        var result: [Fact] = []
        result.reserveCapacity(facts.count)
        for var fact in facts {
            fact.observedAt = observedAt
            if seen.insert(fact).inserted { result.append(fact) }
        }
        return result
    }
}

/// Why a record yields no facts; converted to a ``Translation`` at the top of the translator.
enum Rejection: Error {
    case excluded(ExclusionReason)
    case quarantined(QuarantineReason, String)

    static func invalid(_ detail: String) -> Rejection { .quarantined(.invalidPayload, detail) }
}
