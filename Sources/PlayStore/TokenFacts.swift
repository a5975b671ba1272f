import Facts

/// The facts of one purchase token, read back from the ledger's rows as ``GoogleFact``s (``GoogleFactCodec``)
/// and put in a deterministic order: by time, then by content, so that the same set of
/// facts in any order gives the same sequence.
struct TokenFacts {
    /// A subscription RTDN.
    struct Event {
        var at: Millis
        /// The `notificationType`, `nil` when the stored value is not a number.
        var type: Int?
        var productId: String?
    }

    let token: String
    /// Fetched subscription resources, by statement time (``GoogleFact/Snapshot/at``: a snapshot logged without a
    /// fetch time is placed among the others by ``placeUndatedSnapshots()``).
    var snapshots: [GoogleFact.Snapshot] = []
    var events: [Event] = []
    /// The subscription's `startTimeMillis` / `startTime` (earliest stated).
    var start: Millis?
    /// Stated cancellations: (time, v1 `cancelReason`).
    var cancels: [(at: Millis, reason: Int?)] = []
    /// A voided order: its time, order id, `refundType` (RTDNs) and the units a quantity-based partial refund
    /// gave back (`voidedQuantity` of a voided-purchases item).
    typealias Voided = (at: Millis, order: String?, refundType: Int64?, quantity: Int64?)
    /// Voided orders.
    var voids: [Voided] = []
    /// Pauses a resource showed scheduled or under way: when, and when the subscription resumes (`autoResumeTime`).
    var pauses: [(at: Millis, resumeAt: Millis)] = []
    /// Tokens this one continues (`linkedPurchaseToken`).
    var linkedFrom: [String] = []
    /// `purchases.products.get` statements of the token's one-time product.
    var oneTimes: [(at: Millis, order: String?, purchaseState: Int?, quantity: Int64, productId: String?,
                    currency: String?, free: Bool)] = []
    /// One-time product RTDNs: (time, `notificationType`, product).
    var oneTimeEvents: [(at: Millis, type: Int?, productId: String?)] = []
    /// Some record showed this token is a test purchase (``Fact/Kind/testPurchase``).
    var isTest = false

    init(token: String, facts: [Fact]) {
        self.token = token
        // Sorting on the full content first makes every later tie-break independent of the input order.
        var ordered = facts
        ordered.sortInPlace(by: TokenFacts.precedes)
        for row in ordered {
            guard let fact = GoogleFactCodec.decode(row) else { continue }
            switch fact {
            case .state(let s):
                var snapshot = s
                snapshot.at = row.observedAt
                snapshots.append(snapshot)
            case .event(_, let at, let type, let productId):
                events.append(Event(at: at, type: type, productId: productId))
            case .start(_, let at, _):
                start = min(start ?? at, at)
            case .cancel(_, let at, let reason):
                cancels.append((at, reason))
            case .voided(_, let at, let order, let refundType, let quantity):
                voids.append((at, order, refundType, quantity))
            case .link(_, _, let from):
                if from != token, !linkedFrom.contains(from) { linkedFrom.append(from) }
            case .oneTime(_, let at, let order, let purchaseState, let quantity, let productId, let currency, let free):
                oneTimes.append((at, order, purchaseState, quantity, productId, currency, free))
            case .oneTimeEvent(_, let at, let type, let productId):
                oneTimeEvents.append((at, type, productId))
            case .testPurchase:
                isTest = true
            case .pause(_, let at, let resumeAt?):
                pauses.append((at, resumeAt))
            case .pause, .user:
                continue
            }
        }
        // Already in (observedAt, content) order; events by their time, which is their observedAt.
        events.sort { ($0.at, $0.type ?? -1) < ($1.at, $1.type ?? -1) }
        placeUndatedSnapshots()
    }

    /// A resource shows the latest order of its token, so it was fetched after every fetch that showed an
    /// earlier order and before every fetch that showed a later one. A snapshot logged without a fetch time is
    /// dated by the start of the order it shows (an inference from the resource alone, which a pause or an
    /// account hold can put too early or too late); here it is moved, when needed, to just after the last dated
    /// snapshot of an earlier order and before the first of a later one. The earlier bound wins when they
    /// disagree. A pure function of the facts, like everything here.
    private mutating func placeUndatedSnapshots() {
        guard snapshots.contains(where: \.inferred) else { return }
        let position = snapshots.map { GoogleOrderId.index($0.order) }
        for index in snapshots.indices where snapshots[index].inferred {
            var floor: Millis?
            var ceiling: Millis?
            for other in snapshots.indices where !snapshots[other].inferred {
                if position[other] < position[index] { floor = max(floor ?? .min, snapshots[other].at) }
                if position[other] > position[index] { ceiling = min(ceiling ?? .max, snapshots[other].at) }
            }
            if let ceiling, snapshots[index].at >= ceiling { snapshots[index].at = ceiling - 1 }
            if let floor, snapshots[index].at <= floor { snapshots[index].at = floor + 1 }
        }
        snapshots = snapshots.enumerated()
            .sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
    }

    /// A total order on facts: time first, then every other column.
    /// It reads the two facts where they lie, for ``Swift/Array/sortInPlace(by:)``.
    static func precedes(_ a: UnsafePointer<Fact>, _ b: UnsafePointer<Fact>) -> Bool {
        if a.pointee.observedAt != b.pointee.observedAt { return a.pointee.observedAt < b.pointee.observedAt }
        if a.pointee.at != b.pointee.at { return a.pointee.at < b.pointee.at }
        if a.pointee.kind != b.pointee.kind { return a.pointee.kind < b.pointee.kind }
        if a.pointee.ref != b.pointee.ref { return (a.pointee.ref ?? "") < (b.pointee.ref ?? "") }
        if a.pointee.detail != b.pointee.detail { return (a.pointee.detail ?? "") < (b.pointee.detail ?? "") }
        if a.pointee.end != b.pointee.end { return (a.pointee.end ?? .min) < (b.pointee.end ?? .min) }
        return Fact.precedesInLastColumns(a, b)
    }
}
