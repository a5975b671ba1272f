import Facts

/// The fact kinds the Google translator writes, and what each ``Fact`` column means for them.
///
/// Every Google fact has `platform == .google` and `subject` = the purchase token it is about. Instants are ms
/// UTC, all inside the translator's `PlausibleTimes`. `observedAt` is the RTDN `eventTimeMillis`, or for a fetched
/// resource the envelope's `received_at` (without one, the latest time the resource proves: the start of the
/// order it shows, a later stated cancellation, or an expiry its state says has passed; see `ShownPeriod`).
/// Facts are statements of one record; ``GoogleHistoryBuilder`` rebuilds orders, episodes and outcomes from
/// the set of them, so no fact depends on the order records arrive in. Besides these kinds, the excluded record of
/// a test purchase states `Fact.Kind.testPurchase` for its token (`at`: the purchase's start), and the builder
/// leaves that token out.
public enum GoogleFactKind {
    /// A subscription RTDN: `at` = `eventTimeMillis`, `detail` = the `notificationType` number as sent (unknown
    /// numbers kept), `productId` = `subscriptionId`.
    public static let event: Fact.Kind = "event"
    /// A subscription resource (v1 or v2) as fetched: `at` = `observedAt`, `ref` = the order id it shows
    /// (v1 `orderId`, v2 `latestOrderId`), `end` = its expiry (v1 `expiryTimeMillis`, v2 line item
    /// `expiryTime`; during grace this is the grace end G, not the order's own expiry), `amountMicros`/`currency`
    /// = what the shown order costs (v1 `priceAmountMicros`, or `introductoryPriceAmountMicros` while the order
    /// is within `introductoryPriceCycles`; v2 `recurringPrice` as units × 10⁶ + nanos / 10³; 0 for a free trial;
    /// `nil` for a v2 introductory phase, whose charge the resource does not state), `detail` = a
    /// `GoogleSubscriptionState` code (`v1;SUBSCRIPTION_STATE_IN_GRACE_PERIOD;pay=0;cancel=`), flags `.trial`
    /// (free-trial phase), `.on` (auto-renewing), `.introductory` (introductory price), `.inferred` (logged
    /// without `received_at`: `observedAt` is the lower bound the resource proves, see `ShownPeriod`),
    /// `.paidOrder` (`ref` is v2 `latestSuccessfulOrderId`, a paid order), `.offer` (sold with an introductory
    /// price: v1 `introductoryPriceInfo`), `.prorated` (a v2 proration phase: `amountMicros` is the recurring price,
    /// not the order's charge).
    public static let state: Fact.Kind = "state"
    /// The token's subscription start: `at` = `startTimeMillis` / `startTime`.
    public static let start: Fact.Kind = "start"
    /// A cancellation with a stated time: `at` = v1 `userCancellationTimeMillis` / v2
    /// `userInitiatedCancellation.cancelTime`, `detail` = the v1 `cancelReason` number (0 user).
    public static let cancel: Fact.Kind = "cancel"
    /// A scheduled or current pause: `at` = `observedAt`, `end` = the auto-resume time.
    public static let pause: Fact.Kind = "pause"
    /// A voided (refunded, charged back, revoked) order: `at` = `voidedTimeMillis` (or the voided-purchase
    /// RTDN's event time), `ref` = its `orderId`, `detail` = `refundType` when sent, then `;quantity=N` with a
    /// `voidedQuantity` (`QuantifiedCode`).
    public static let voided: Fact.Kind = "voided"
    /// A one-time product purchase (`purchases.products.get`): `at` = `purchaseTimeMillis`, `ref` = `orderId`,
    /// `detail` = `purchaseState` (0 purchased, 1 canceled, 2 pending), then `;quantity=N` when more than one
    /// unit was bought (`QuantifiedCode`), `currency` from the envelope; the price is never in the payload (the
    /// price list supplies a unit's); flag `.free` when `purchaseType` says it was not paid for (1 promo code,
    /// 2 rewarded).
    public static let oneTime: Fact.Kind = "one_time"
    /// A one-time product RTDN: `at` = `eventTimeMillis`, `detail` = its `notificationType` (1 purchased,
    /// 2 canceled), `productId` = `sku`.
    public static let oneTimeEvent: Fact.Kind = "one_time_event"
}
