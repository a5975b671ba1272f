/// Everything the metrics need to know about one subscription, rebuilt from its facts by the store's history
/// builder. Store-agnostic: `Metrics` never looks at a store payload or a fact, only at this.
///
/// Invariants (builders guarantee them, `Metrics` relies on them):
/// - ``periods`` are sorted by ``Period/start``, then ``Period/id``; a period's `start < end`.
/// - Periods of one subscription do not overlap, except where an upgrade ends the old period at the change
///   (the old period's ``Period/end`` is then the change time and its ``Period/endReason`` is ``EndReason/replaced``).
/// - ``episodes`` are sorted by ``BillingEpisode/failedAt``.
/// - All instants are milliseconds since the epoch, UTC. Nothing is cut at the as-of time: `Metrics` does that.
public struct SubscriptionHistory: Sendable, Hashable {
    public var platform: Platform
    /// Apple `original_transaction_id`; Google: the first purchase token of the chain.
    public var id: String
    /// Access periods (store transactions / orders), trial and paid.
    public var periods: [Period]
    /// Billing-issue episodes.
    public var episodes: [BillingEpisode]
    /// One-time purchases (consumables, non-consumables, Google in-app products) that belong to this subject.
    /// A subject with purchases and no periods is not a subscription and counts only in revenue.
    public var purchases: [OneTimePurchase]
    /// Currencies seen anywhere on this subscription, for periods whose own currency is unknown
    /// (`metrics.md`: "else from another record of the same subscription"). Sorted.
    public var currencies: [String]
    /// Google purchase tokens of this chain that only notifications name (RTDNs, no subscription resource): an
    /// RTDN states neither an expiry nor a price, so such a token gives no period, and the report says how many
    /// there are rather than leave them out unsaid. Empty for Apple, whose notifications carry their transactions.
    public var notifiedOnlyTokens: [UnheldStatement] = []
    /// Google voided purchases of this chain that no period or one-time purchase holds (an order no record showed
    /// and none could be filled in, or a token only voids name): refunds of charges no table holds, which the
    /// report counts rather than drop unsaid.
    public var unplacedRefunds: [UnheldStatement] = []

    public init(platform: Platform, id: String, periods: [Period] = [], episodes: [BillingEpisode] = [],
                purchases: [OneTimePurchase] = [], currencies: [String] = []) {
        self.platform = platform
        self.id = id
        self.periods = periods
        self.episodes = episodes
        self.purchases = purchases
        self.currencies = currencies
    }
}

/// Something a Google record states that no table holds, which the report counts per product rather than leave
/// out unsaid: a purchase token only notifications name (``SubscriptionHistory/notifiedOnlyTokens``), a voided
/// purchase no period or purchase holds (``SubscriptionHistory/unplacedRefunds``).
public struct UnheldStatement: Sendable, Hashable {
    /// The product the records name (a notification's `subscriptionId`, the token's orders'); empty when none
    /// does (a voided purchase names none).
    public var productId: String
    /// When it was first stated (the first notification's event time, the voiding; ms, UTC): a report as of an
    /// earlier time does not count it.
    public var at: Millis

    public init(productId: String, at: Millis) {
        self.productId = productId
        self.at = at
    }
}

/// One store transaction (Apple) or order (Google) granting access over `[start, end)`.
public struct Period: Sendable, Hashable {
    /// Apple `transaction_id`; Google `orderId` (`GPA.…` for the first, `GPA.…..N` for renewal N).
    public var id: String
    public var productId: String
    /// Start of access (ms, UTC).
    public var start: Millis
    /// End of access as granted (ms, UTC), before any revocation; exclusive. For Google this is the order's own
    /// expiry, never the expiry extended by a grace period.
    public var end: Millis
    /// When the store charged for it (ms, UTC): Apple `purchase_date_ms`, Google the order's charge time.
    /// Usually equal to ``start``.
    public var chargedAt: Millis
    /// A free trial (no charge). Introductory prices are paid periods.
    public var isTrial: Bool
    /// Bought under an introductory price or another offer (never a free trial), which may cost less than the
    /// product's list price: without a stated ``priceMicros`` the report prices it from the list, and says so.
    public var isIntroductory: Bool
    /// Counted as paid though no payload showed it charged or free: a Google first order the archive shows only
    /// once it had ended (an expired resource, from which Google drops `paymentState`) or only in v2 resources
    /// fetched before January 2026 (no `offerPhase` yet), which an unconverted free trial cannot be told from.
    /// metrics.md counts every period not shown as a trial as paid; the report says how many it counted so.
    public var isAssumedPaid = false
    /// A Google proration period (time a change of plan credited, or an add-on aligned with its base plan), whose
    /// charge no payload states: nothing with time proration, a prorated difference or the full price with other
    /// replacement modes. ``priceMicros`` is then the plan's recurring price, which its MRR runs at; the report
    /// counts the period as an unpriced transaction rather than guess its charge.
    public var isProration = false
    /// An order no resource showed, filled in between two that did (Google's `..N` numbering proves it): its
    /// start and length are inferred, one billing period each.
    public var isFilledIn = false
    /// Price in millionths of the major unit of ``currency``, when the payload states it.
    public var priceMicros: Int64?
    /// ISO 4217 currency of the price, when known from the payload or its context.
    public var currency: String?
    /// Refund or revocation time (ms, UTC); access ends there. Never set for an upgrade's cancellation.
    public var revokedAt: Millis?
    /// When an Apple REFUND_REVERSED undid ``revokedAt`` (ms, UTC, the notice's `signedDate`): a report as of an
    /// earlier time keeps the refund it could see; as of this time or later, the period was never revoked.
    public var revocationReversedAt: Millis?
    /// Share of the price refunded, in thousandths of a percent (Apple `revocationPercentage`): 100000 = all.
    public var refundedPerHundredThousand: Int64
    /// Why access stopped at ``end`` when no later period continues it.
    public var endReason: EndReason
    /// The end the period was sold with, when an upgrade or a replacement ended it sooner (``end`` is then the
    /// change; see ``end(replacedAt:)``) or an extension later (Apple RENEWAL_EXTENDED); `nil` when it ran as sold.
    /// Its billing duration is the sold length: a monthly period upgraded after two weeks, or extended by a week,
    /// is still monthly, for its MRR and its retention cohort.
    public var scheduledEnd: Millis?

    public init(id: String, productId: String, start: Millis, end: Millis, chargedAt: Millis? = nil,
                isTrial: Bool = false, isIntroductory: Bool = false, priceMicros: Int64? = nil, currency: String? = nil,
                revokedAt: Millis? = nil, refundedPerHundredThousand: Int64 = 100_000,
                endReason: EndReason = .unknown) {
        self.id = id
        self.productId = productId
        self.start = start
        self.end = end
        self.chargedAt = chargedAt ?? start
        self.isTrial = isTrial
        self.isIntroductory = isIntroductory && !isTrial
        self.priceMicros = priceMicros
        self.currency = currency
        self.revokedAt = revokedAt
        self.refundedPerHundredThousand = refundedPerHundredThousand
        self.endReason = endReason
    }

    /// Ends the period at `change`, an upgrade or replacement inside it: ``end`` becomes `change` and
    /// ``scheduledEnd`` keeps the end it was sold with. Nothing changes when `change` is not before ``end``.
    public mutating func end(replacedAt change: Millis) {
        guard change < end else { return }
        if scheduledEnd == nil { scheduledEnd = end }
        end = change
    }
}

/// Why a subscription's access stopped at the end of a period that nothing continued.
/// Maps onto the churn reasons of `metrics.md`.
public enum EndReason: String, Sendable, Hashable, Codable {
    /// Auto-renew was off at the period end (user cancelled): voluntary churn.
    case voluntary
    /// The renewal charge failed (see the subscription's episodes): involuntary churn, at the grace end.
    case billingIssue = "billing_issue"
    /// Ended by an upgrade, downgrade or crossgrade to another period of the same subscription: no churn.
    case replaced
    /// A Google pause began: paused churn.
    case paused
    /// The user declined a price increase: other churn.
    case priceIncrease = "price_increase"
    /// The product was not available for renewal: other churn.
    case productUnavailable = "product_unavailable"
    /// The developer cancelled the subscription: other churn.
    case developerCancel = "developer_cancel"
    /// Nothing in the archive says why: other churn.
    case unknown
}

/// A billing-issue episode (`metrics.md`): the renewal charge at ``failedAt`` (E) failed; the grace phase runs
/// to ``graceEnd`` (G, equal to E when the app offers no grace); then the retry phase (Apple billing retry,
/// Google account hold) until the outcome.
public struct BillingEpisode: Sendable, Hashable {
    /// E: end of the period whose renewal failed (ms, UTC).
    public var failedAt: Millis
    /// G: end of the grace period (ms, UTC); `== failedAt` without grace.
    public var graceEnd: Millis
    public var outcome: Outcome

    public init(failedAt: Millis, graceEnd: Millis, outcome: Outcome) {
        self.failedAt = failedAt
        self.graceEnd = graceEnd
        self.outcome = outcome
    }

    /// The longest a store keeps retrying a failed renewal (ms): 60 days, Apple's billing retry and Google's
    /// grace period and account hold together (`metrics.md`). After it, a renewal period's outcome is final.
    public static let longestRetry: Millis = 60 * 86_400_000

    /// E + ``longestRetry`` for an episode that failed at `failedAt` (saturating at `Millis.max`): the latest an
    /// unrecovered episode can be lost, and when it is lost where the archive shows no outcome.
    public static func latestLoss(failedAt: Millis) -> Millis {
        let sum = failedAt.addingReportingOverflow(longestRetry)
        return sum.overflow ? Millis.max : sum.partialValue
    }

    /// How an episode ended. Every episode has an outcome: where the archive shows none, the store's longest
    /// retry decides it (`metrics.md`). `Metrics` turns outcomes after the as-of time into open.
    public enum Outcome: Sendable, Hashable {
        /// Recovered at T: a new paid period started then.
        case recovered(at: Millis)
        /// Lost at L: expired, cancelled or refunded; with no outcome in the archive, E + 60 days (Apple's longest
        /// billing retry; Google's longest grace period and account hold together).
        case lost(at: Millis)
    }
}

/// A one-time purchase (Apple consumable / non-consumable, Google in-app product).
public struct OneTimePurchase: Sendable, Hashable {
    /// Apple `transaction_id`; Google `orderId`, else the purchase token.
    public var id: String
    public var productId: String
    public var purchasedAt: Millis
    /// The whole purchase's price as the store stated it (Apple `price`, which covers every unit bought); `nil`
    /// when the payload states none and the price list's unit price is used, times ``quantity``.
    public var priceMicros: Int64?
    public var currency: String?
    /// Units bought in this one transaction (Apple and Google `quantity` of a consumable), at least 1.
    public var quantity: Int64
    /// What was given back, each refund at its own time, in time order; together never more than the price.
    public var refunds: [Refund]

    /// One refund of part or all of a purchase: `parts` / `whole` of its price, at `at` (ms, UTC). Apple states
    /// a share in thousandths of a percent (`revocationPercentage` / 100000), Google the units of a
    /// quantity-based partial refund (`voidedQuantity` / the quantity bought); a refund of everything is 1 / 1.
    public struct Refund: Sendable, Hashable {
        public var at: Millis
        public var parts: Int64
        public var whole: Int64
        /// When an Apple REFUND_REVERSED undid it (ms, UTC): from then on it never happened.
        public var reversedAt: Millis?

        public init(at: Millis, parts: Int64 = 1, whole: Int64 = 1, reversedAt: Millis? = nil) {
            self.at = at
            self.parts = parts
            self.whole = whole
            self.reversedAt = reversedAt
        }

        /// Whether a report as of `asOf` sees it: made by then, and not reversed by then.
        public func stands(asOf: Millis) -> Bool { at <= asOf && reversedAt.map { $0 > asOf } ?? true }
    }

    public init(id: String, productId: String, purchasedAt: Millis, priceMicros: Int64? = nil,
                currency: String? = nil, quantity: Int64 = 1, refunds: [Refund] = []) {
        self.id = id
        self.productId = productId
        self.purchasedAt = purchasedAt
        self.priceMicros = priceMicros
        self.currency = currency
        self.quantity = quantity
        self.refunds = refunds
    }
}
