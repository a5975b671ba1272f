import Facts

/// The facts of one purchase token, decoded from the generic ``Fact`` columns into what they mean
/// (``GoogleFactKind``) and put in a deterministic order: by time, then by content, so that the same set of
/// facts in any order gives the same sequence.
struct TokenFacts {
    /// A fetched subscription resource.
    struct Snapshot {
        var observedAt: Millis
        var order: String?
        var expiry: Millis?
        var state: GoogleSubscriptionState
        var productId: String?
        var priceMicros: Int64?
        var currency: String?
        var isTrial: Bool
    }

    /// A subscription RTDN.
    struct Event {
        var at: Millis
        /// The `notificationType`, `nil` when the stored value is not a number.
        var type: Int?
        var productId: String?
    }

    let token: String
    var snapshots: [Snapshot] = []
    var events: [Event] = []
    /// The subscription's `startTimeMillis` / `startTime` (earliest stated).
    var start: Millis?
    /// Stated cancellations: (time, v1 `cancelReason`).
    var cancels: [(at: Millis, reason: Int?)] = []
    /// Voided orders: (time, order id).
    var voids: [(at: Millis, order: String?)] = []
    /// Tokens this one continues (`linkedPurchaseToken`).
    var linkedFrom: [String] = []
    var oneTimes: [Fact] = []
    var oneTimeEvents: [Fact] = []
    /// Some record showed this token is a test purchase (``Fact/Kind/testPurchase``).
    var isTest = false

    init(token: String, facts: [Fact]) {
        self.token = token
        // Sorting on the full content first makes every later tie-break independent of the input order.
        let ordered = facts.sorted(by: TokenFacts.precedes)
        for fact in ordered {
            switch fact.kind {
            case GoogleFactKind.state:
                guard let state = GoogleSubscriptionState(code: fact.detail ?? "") else { continue }
                snapshots.append(Snapshot(observedAt: fact.observedAt, order: fact.ref, expiry: fact.end, state: state,
                                          productId: fact.productId, priceMicros: fact.amountMicros,
                                          currency: fact.currency, isTrial: fact.flags.contains(.trial)))
            case GoogleFactKind.event:
                events.append(Event(at: fact.at, type: fact.detail.flatMap { Int($0) }, productId: fact.productId))
            case GoogleFactKind.start:
                start = min(start ?? fact.at, fact.at)
            case GoogleFactKind.cancel:
                cancels.append((fact.at, fact.detail.flatMap { Int($0) }))
            case GoogleFactKind.voided:
                voids.append((fact.at, fact.ref))
            case Fact.Kind.link:
                if let ref = fact.ref, ref != token, !linkedFrom.contains(ref) { linkedFrom.append(ref) }
            case GoogleFactKind.oneTime:
                oneTimes.append(fact)
            case GoogleFactKind.oneTimeEvent:
                oneTimeEvents.append(fact)
            case Fact.Kind.testPurchase:
                isTest = true
            default:
                continue
            }
        }
        // Already in (observedAt, content) order; events by their time, which is their observedAt.
        events.sort { ($0.at, $0.type ?? -1) < ($1.at, $1.type ?? -1) }
    }

    /// A total order on facts: time first, then every other column.
    static func precedes(_ a: Fact, _ b: Fact) -> Bool {
        if a.observedAt != b.observedAt { return a.observedAt < b.observedAt }
        if a.at != b.at { return a.at < b.at }
        if a.kind != b.kind { return a.kind < b.kind }
        if a.ref != b.ref { return (a.ref ?? "") < (b.ref ?? "") }
        if a.detail != b.detail { return (a.detail ?? "") < (b.detail ?? "") }
        if a.end != b.end { return (a.end ?? .min) < (b.end ?? .min) }
        if a.productId != b.productId { return (a.productId ?? "") < (b.productId ?? "") }
        if a.amountMicros != b.amountMicros { return (a.amountMicros ?? .min) < (b.amountMicros ?? .min) }
        if a.currency != b.currency { return (a.currency ?? "") < (b.currency ?? "") }
        return a.flags.rawValue < b.flags.rawValue
    }
}
