/// The simulated truth of one subscription: every period, billing-issue episode and one-time purchase exactly as
/// the simulation made them happen. `TruthCalculator` computes metrics.md from this, never from the archives.
///
/// All instants are epoch milliseconds, UTC. Prices are integer micros of `currency`.
struct TimelineSubscription: Sendable {
    enum Platform: String, Sendable { case apple, google }

    var platform: Platform
    /// Apple `original_transaction_id`; Google: the first purchase token of the chain.
    var id: String
    var periods: [TimelinePeriod] = []
    var episodes: [TimelineEpisode] = []
    var oneTimePurchases: [TimelineOneTimePurchase] = []
}

/// How a period ended, as DESIGN.md's end reasons name it.
enum TimelineEndReason: Sendable, Equatable {
    /// Followed by the next period back to back, or still running.
    case renewed
    case voluntary
    case billingIssue
    /// Ended by an upgrade / downgrade at the change (no churn).
    case replaced
    case paused
    case other
}

/// One store transaction / order granting access over `[start, end)` (ms UTC).
struct TimelinePeriod: Sendable {
    var product: String
    /// Apple `transaction_id` or Google order id (`GPA.x`, `GPA.x..N`).
    var transactionId: String
    /// Google: the purchase token this order belongs to (the chain's tokens differ after an upgrade).
    var token: String
    var start: Int64
    var end: Int64
    var trial: Bool
    /// A paid period of a pay-as-you-go introductory offer: ``priceMicros`` is the offer's price, which the
    /// payloads state (Apple's signed transaction, Google's v1 `introductoryPriceInfo`) and the price list does not.
    var introductory = false
    /// Integer micros; nil for a trial.
    var priceMicros: Int64?
    var currency: String
    /// The end it was sold with, when an upgrade ended it sooner at ``end``: what the stores show as its expiry
    /// until the change.
    var scheduledEnd: Int64?
    /// Refund / revocation instant; the period ends there.
    var revokedAt: Int64?
    var endReason: TimelineEndReason = .renewed
}

/// A billing-issue episode: grace `[E, G)`, retry `[G, L)`, ended by recovery at `T` or loss at `L`.
struct TimelineEpisode: Sendable {
    var start: Int64
    var graceEnd: Int64
    enum Outcome: Sendable { case recovered(Int64), lost(Int64) }
    var outcome: Outcome
}

/// A consumable / one-time product bought at `at` (ms UTC): `quantity` units for `priceMicros` of `currency` in
/// all (the unit price times the quantity).
struct TimelineOneTimePurchase: Sendable {
    var product: String
    var at: Int64
    var quantity: Int64
    var priceMicros: Int64
    var currency: String
}
