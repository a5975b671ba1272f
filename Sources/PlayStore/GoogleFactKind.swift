import Facts

/// The fact kinds the Google translator writes, and what each ``Fact`` column means for them.
///
/// Every Google fact has `platform == .google` and `subject` = the purchase token it is about. Instants are ms
/// UTC. `observedAt` is the RTDN `eventTimeMillis`, or for a fetched resource the envelope's `received_at`.
/// Facts are statements of one record; ``GoogleHistoryBuilder`` rebuilds orders, episodes and outcomes from
/// the set of them, so no fact depends on the order records arrive in.
public enum GoogleFactKind {
    /// A subscription RTDN: `at` = `eventTimeMillis`, `detail` = the `notificationType` number as sent (unknown
    /// numbers kept), `productId` = `subscriptionId`.
    public static let event: Fact.Kind = "event"
    /// A subscription resource (v1 or v2) as fetched: `at` = `observedAt`, `ref` = the order id it shows
    /// (v1 `orderId`, v2 `latestOrderId`), `end` = its expiry (v1 `expiryTimeMillis`, v2 line item
    /// `expiryTime`), `amountMicros`/`currency` = the recurring price, `detail` = a ``GoogleSubscriptionState``
    /// code, flags `.trial` (free-trial phase), `.on` (auto-renewing), `.introductory` (introductory price).
    public static let state: Fact.Kind = "state"
    /// The token's subscription start: `at` = `startTimeMillis` / `startTime`.
    public static let start: Fact.Kind = "start"
    /// A cancellation with a stated time: `at` = v1 `userCancellationTimeMillis` / v2
    /// `userInitiatedCancellation.cancelTime`, `detail` = the v1 `cancelReason` number (0 user).
    public static let cancel: Fact.Kind = "cancel"
    /// A scheduled or current pause: `at` = `observedAt`, `end` = the auto-resume time.
    public static let pause: Fact.Kind = "pause"
    /// A voided (refunded, charged back, revoked) order: `at` = `voidedTimeMillis` (or the voided-purchase
    /// RTDN's event time), `ref` = its `orderId`, `detail` = `refundType` when sent.
    public static let voided: Fact.Kind = "voided"
    /// A one-time product purchase (`purchases.products.get`): `at` = `purchaseTimeMillis`, `ref` = `orderId`,
    /// `detail` = `purchaseState` (0 purchased, 1 canceled, 2 pending), `currency` from the envelope; the price
    /// is never in the payload (the price list supplies it).
    public static let oneTime: Fact.Kind = "one_time"
    /// A one-time product RTDN: `at` = `eventTimeMillis`, `detail` = its `notificationType` (1 purchased,
    /// 2 canceled), `productId` = `sku`.
    public static let oneTimeEvent: Fact.Kind = "one_time_event"
}
