import Facts

/// The fact kinds the App Store translator writes, and what each ``Fact`` column means for them.
/// Every Apple fact has `platform = .apple`; `observedAt` is the statement's time: a V2 notification's (or bare
/// JWS's) `signedDate`, a verifyReceipt response's `receipt.request_date_ms`, else the envelope's `received_at`,
/// else the latest instant in the payload. All instants are ms UTC.
public enum AppleFactKind {
    /// A transaction granting access (auto-renewable or non-renewing subscription).
    /// subject = `original_transaction_id`, ref = `transaction_id`, at = purchase time, end = expiry time
    /// (as sold, also for an upgraded transaction: see ``upgrade``), productId, amountMicros = V2 `price` × 1000,
    /// currency = V2 `currency` else the envelope's, flags: `.trial` (`is_trial_period`, FREE_TRIAL),
    /// `.introductory` (`is_in_intro_offer_period`, other intro offers), `.upgraded` (`is_upgraded`),
    /// detail = `web_order_line_item_id` when sent.
    public static let period: Fact.Kind = "period"
    /// A refund or revocation of a transaction (never an upgrade's cancellation).
    /// subject = `original_transaction_id` (a one-time purchase: its `transaction_id`), ref = `transaction_id`,
    /// at = `cancellation_date_ms` / `revocationDate`, detail = share refunded in thousandths of a percent
    /// (`revocationPercentage`; "100000" when the whole price), productId.
    public static let revocation: Fact.Kind = "revocation"
    /// An upgraded transaction's cancellation (`is_upgraded` / `isUpgraded`): its period ends there, replaced, not
    /// refunded. subject = `original_transaction_id`, ref = `transaction_id`, at = `cancellation_date_ms` /
    /// `revocationDate`.
    public static let upgrade: Fact.Kind = "upgrade"
    /// A REFUND_REVERSED notification: the revocation of ref = `transaction_id` is undone.
    /// subject as for ``revocation``, at = the notification's `signedDate`.
    public static let refundReversed: Fact.Kind = "refund_reversed"
    /// Auto-renew state. subject = `original_transaction_id`, at = when it was (or is known to be) so:
    /// `auto_renew_status_change_date_ms` for a V1 DID_CHANGE_RENEWAL_STATUS, else the statement time;
    /// flags `.on` = auto-renew on; productId = `auto_renew_product_id` / `autoRenewProductId`.
    public static let renewalStatus: Fact.Kind = "renewal_status"
    /// A failed renewal charge. subject = `original_transaction_id`, at = E (the expiry of the period whose renewal
    /// failed) when the payload shows it, else the time of the failure notice (the builder then takes the latest
    /// period ending at or before it); end = G (`grace_period_expires_date_ms` / `gracePeriodExpiresDate`) when
    /// known; detail = what said so (`DID_FAIL_TO_RENEW`, `GRACE_PERIOD_EXPIRED`, `is_in_billing_retry_period`,
    /// `expiration_intent`).
    public static let billingIssue: Fact.Kind = "billing_issue"
    /// Access ended without renewal. subject = `original_transaction_id`, at = the expiry time (for a V2 EXPIRED
    /// BILLING_RETRY: the notification's `signedDate`, the end L of billing retry), end = the expiry of the
    /// period concerned when known, detail = reason: `voluntary`, `billing`, `price_increase`,
    /// `product_unavailable`, `other`, or the raw value when unknown.
    public static let expiry: Fact.Kind = "expiry"
    /// A consumable or non-consumable purchase. subject = ref = `transaction_id`, at = purchase time, productId,
    /// amountMicros (the whole transaction's), currency as for ``period``; detail = `quantity` when above 1.
    public static let oneTime: Fact.Kind = "one_time"
    /// A currency the context of a record names (envelope `currency`). subject = `original_transaction_id`,
    /// at = the earliest purchase time in the record (else the statement time), currency.
    public static let currency: Fact.Kind = "currency"
    /// ``Fact/Kind/user``: subject = `original_transaction_id`, ref = envelope `app_user_id` or V2 `appAccountToken`.
    public static let user: Fact.Kind = Fact.Kind.user
}
