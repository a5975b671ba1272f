import Facts

/// One statement of an App Store payload, typed: a case per fact kind, each with named fields in stated units,
/// where the ledger's ``Fact`` rows have generic columns. Translators state these; ``AppleFactCodec`` writes
/// each as its row (columns as ``AppleFactKind`` documents them) and reads rows back for the history builder.
/// Every instant is ms UTC; every subject is the subscription's `original_transaction_id`, or a one-time
/// purchase's own `transaction_id`.
public enum AppleFact: Sendable, Hashable {
    case period(Period)
    case oneTime(OneTime)
    case revocation(Revocation)
    /// An upgraded transaction's cancellation: the change that ended it (never a refund).
    case upgrade(Upgrade)
    case refundReversed(RefundReversal)
    case renewalStatus(RenewalStatus)
    case billingIssue(BillingIssue)
    case expiry(Expiry)
    /// A currency the record's context names (envelope `currency`), at the purchase it came with.
    case currency(subject: String, at: Millis, code: String)
    /// The app's user id of the subscription (`appAccountToken`, else envelope `app_user_id`), from `at` on.
    case user(subject: String, at: Millis, id: String)

    /// A transaction granting access for a period (auto-renewable or non-renewing subscription).
    public struct Period: Sendable, Hashable {
        public var subject: String
        public var transactionId: String
        public var start: Millis
        /// The expiry, as sold (an upgrade that ended it sooner is its own fact, ``AppleFact/upgrade(_:)``).
        public var end: Millis
        public var productId: String
        public var webOrderLineItemId: String?
        /// Micro-units of ``currency``; `nil` when the payload states no price (receipts).
        public var priceMicros: Int64?
        public var currency: String?
        public var offer: Offer
        /// Ended by an upgrade: its cancellation is not a refund.
        public var upgraded: Bool

        public init(subject: String, transactionId: String, start: Millis, end: Millis, productId: String,
                    webOrderLineItemId: String? = nil, priceMicros: Int64? = nil, currency: String? = nil,
                    offer: Offer = .none, upgraded: Bool = false) {
            self.subject = subject
            self.transactionId = transactionId
            self.start = start
            self.end = end
            self.productId = productId
            self.webOrderLineItemId = webOrderLineItemId
            self.priceMicros = priceMicros
            self.currency = currency
            self.offer = offer
            self.upgraded = upgraded
        }
    }

    /// The offer a period was bought under.
    public enum Offer: Sendable, Hashable {
        case none
        /// A free trial (`is_trial_period`, `offerDiscountType` FREE_TRIAL).
        case freeTrial
        /// A paid offer: introductory (`is_in_intro_offer_period`, `offerType` 1), promotional, an offer code or a
        /// win-back offer.
        case introductory
        /// An offer (`offerType` 1 introductory, 2 promotional, 3 offer code) whose kind the payload does not
        /// state: signed transactions before late 2023 carry no `offerDiscountType`, so a free trial and a paid
        /// offer look alike. Counted as paid, but it never overrules another statement of the same transaction
        /// that says which it was.
        case unstatedOffer
    }

    /// A consumable or non-consumable purchase; its subject is its own `transaction_id`.
    public struct OneTime: Sendable, Hashable {
        public var transactionId: String
        public var purchasedAt: Millis
        public var productId: String
        /// The whole transaction's price (a signed transaction's `price` covers every unit bought).
        public var priceMicros: Int64?
        public var currency: String?
        /// Units bought (`quantity`), at least 1.
        public var quantity: Int64

        public init(transactionId: String, purchasedAt: Millis, productId: String, priceMicros: Int64? = nil,
                    currency: String? = nil, quantity: Int64 = 1) {
            self.transactionId = transactionId
            self.purchasedAt = purchasedAt
            self.productId = productId
            self.priceMicros = priceMicros
            self.currency = currency
            self.quantity = quantity
        }
    }

    /// A refund or revocation of a transaction (never an upgrade's cancellation).
    public struct Revocation: Sendable, Hashable {
        public var subject: String
        public var transactionId: String
        public var at: Millis
        /// Share refunded, in thousandths of a percent (100000 = all).
        public var share: Int64
        public var productId: String

        public init(subject: String, transactionId: String, at: Millis, share: Int64, productId: String) {
            self.subject = subject
            self.transactionId = transactionId
            self.at = at
            self.share = share
            self.productId = productId
        }
    }

    /// The cancellation of an upgraded transaction (`is_upgraded` / `isUpgraded` with `cancellation_date_ms` /
    /// `revocationDate`): the period ends there, replaced by the new product's, and is not refunded.
    public struct Upgrade: Sendable, Hashable {
        public var subject: String
        public var transactionId: String
        public var at: Millis

        public init(subject: String, transactionId: String, at: Millis) {
            self.subject = subject
            self.transactionId = transactionId
            self.at = at
        }
    }

    /// A REFUND_REVERSED notification: the revocation of `transactionId` is undone.
    public struct RefundReversal: Sendable, Hashable {
        public var subject: String
        public var transactionId: String
        /// The notification's `signedDate`.
        public var at: Millis
        public var productId: String

        public init(subject: String, transactionId: String, at: Millis, productId: String) {
            self.subject = subject
            self.transactionId = transactionId
            self.at = at
            self.productId = productId
        }
    }

    /// Auto-renew on or off, as known at `at`.
    public struct RenewalStatus: Sendable, Hashable {
        public var subject: String
        public var at: Millis
        public var autoRenew: Bool
        /// The product it renews into (`auto_renew_product_id` / `autoRenewProductId`).
        public var productId: String?

        public init(subject: String, at: Millis, autoRenew: Bool, productId: String? = nil) {
            self.subject = subject
            self.at = at
            self.autoRenew = autoRenew
            self.productId = productId
        }
    }

    /// A failed renewal charge: `at` is E, the end of the period whose renewal failed, when the payload shows
    /// it, else the time of the notice.
    public struct BillingIssue: Sendable, Hashable {
        public var subject: String
        public var at: Millis
        /// G, the end of the grace period, when known.
        public var graceEnd: Millis?
        /// What said so: `DID_FAIL_TO_RENEW`, `GRACE_PERIOD_EXPIRED`, `isInBillingRetryPeriod`,
        /// `is_in_billing_retry_period`, `expirationIntent`, `expiration_intent`, or a recovery (`BILLING_RECOVERY`,
        /// `DID_RECOVER`, `RENEWAL`), stated at the recovered period's start.
        public var statedBy: String

        /// Stated by a recovery, at the recovered period's start, rather than by a failure notice.
        public var isRecovery: Bool { ["BILLING_RECOVERY", "DID_RECOVER", "RENEWAL"].contains(statedBy) }

        public init(subject: String, at: Millis, graceEnd: Millis? = nil, statedBy: String) {
            self.subject = subject
            self.at = at
            self.graceEnd = graceEnd
            self.statedBy = statedBy
        }
    }

    /// Access ended without renewal, at `at` (the expiry; for the end of billing retry, the notice).
    public struct Expiry: Sendable, Hashable {
        public var subject: String
        public var at: Millis
        public var reason: ExpirationReason
        /// The expiry of the period concerned, when known.
        public var periodEnd: Millis?

        public init(subject: String, at: Millis, reason: ExpirationReason, periodEnd: Millis? = nil) {
            self.subject = subject
            self.at = at
            self.reason = reason
            self.periodEnd = periodEnd
        }
    }

    /// The instant the statement is about.
    public var at: Millis {
        switch self {
        case .period(let p): p.start
        case .oneTime(let o): o.purchasedAt
        case .revocation(let r): r.at
        case .upgrade(let u): u.at
        case .refundReversed(let r): r.at
        case .renewalStatus(let s): s.at
        case .billingIssue(let b): b.at
        case .expiry(let e): e.at
        case .currency(_, let at, _), .user(_, let at, _): at
        }
    }
}

/// Why a subscription expired: `expiration_intent` / `expirationIntent` 1–5, or a V2 EXPIRED subtype. A value
/// unknown to us is kept as sent (`.unknown`), never dropped.
public enum ExpirationReason: Sendable, Hashable {
    case voluntary
    case billing
    case priceIncrease
    case productUnavailable
    case other
    case unknown(String)

    /// The text stored in the fact's `detail`.
    public var rawValue: String {
        switch self {
        case .voluntary: "voluntary"
        case .billing: "billing"
        case .priceIncrease: "price_increase"
        case .productUnavailable: "product_unavailable"
        case .other: "other"
        case .unknown(let raw): raw
        }
    }

    /// The reason a stored `detail` names.
    public init(rawValue: String) {
        switch rawValue {
        case "voluntary": self = .voluntary
        case "billing": self = .billing
        case "price_increase": self = .priceIncrease
        case "product_unavailable": self = .productUnavailable
        case "other": self = .other
        default: self = .unknown(rawValue)
        }
    }

    /// `expiration_intent` / `expirationIntent`: 1 voluntary, 2 billing, 3 price increase, 4 product
    /// unavailable, 5 other; any other value is kept raw.
    init(intent: String) {
        switch intent {
        case "1": self = .voluntary
        case "2": self = .billing
        case "3": self = .priceIncrease
        case "4": self = .productUnavailable
        case "5": self = .other
        default: self = .unknown(intent)
        }
    }

    /// V2 EXPIRED subtypes; `nil` (no subtype) is `other`, unknown subtypes are kept raw.
    init(subtype: String?) {
        switch subtype {
        case "VOLUNTARY": self = .voluntary
        case "BILLING_RETRY": self = .billing
        case "PRICE_INCREASE": self = .priceIncrease
        case "PRODUCT_NOT_FOR_SALE": self = .productUnavailable
        case nil: self = .other
        case let raw?: self = .unknown(raw)
        }
    }
}

/// Writes ``AppleFact``s as the ledger's ``Fact`` rows and reads them back. The row layout of each kind is
/// ``AppleFactKind``'s; ``version`` is raised whenever it changes, and is part of ``AppStoreTranslator/rulesVersion``
/// (a ledger written under another layout is reprocessed from its payloads, never read with this one).
public enum AppleFactCodec {
    /// The version of the row layout.
    /// 2: an upgraded transaction's period keeps its expiry, its cancellation is an ``AppleFactKind/upgrade`` row.
    /// 3: an offer of unstated kind is flagged `.introductory` + `.inferred`.
    /// 4: a one-time purchase's `quantity` above 1 in `detail`.
    public static let version: Int64 = 4

    /// The row of `fact`, stated at `observedAt`.
    public static func encode(_ fact: AppleFact, observedAt: Millis) -> Fact {
        let row = Fact.Rows(platform: .apple, observedAt: observedAt)
        switch fact {
        case .period(let p):
            var flags: Fact.Flags = []
            switch p.offer {
            case .none: break
            case .freeTrial: flags.insert(.trial)
            case .introductory: flags.insert(.introductory)
            case .unstatedOffer: flags.formUnion([.introductory, .inferred])
            }
            if p.upgraded { flags.insert(.upgraded) }
            return row(AppleFactKind.period, p.subject, at: p.start, ref: p.transactionId, detail: p.webOrderLineItemId,
                       productId: p.productId, end: p.end, amountMicros: p.priceMicros, currency: p.currency, flags: flags)
        case .oneTime(let o):
            return row(AppleFactKind.oneTime, o.transactionId, at: o.purchasedAt, ref: o.transactionId,
                       detail: o.quantity == 1 ? nil : String(o.quantity), productId: o.productId,
                       amountMicros: o.priceMicros, currency: o.currency)
        case .revocation(let r):
            return row(AppleFactKind.revocation, r.subject, at: r.at, ref: r.transactionId, detail: String(r.share),
                       productId: r.productId)
        case .upgrade(let u):
            return row(AppleFactKind.upgrade, u.subject, at: u.at, ref: u.transactionId)
        case .refundReversed(let r):
            return row(AppleFactKind.refundReversed, r.subject, at: r.at, ref: r.transactionId, productId: r.productId)
        case .renewalStatus(let s):
            return row(AppleFactKind.renewalStatus, s.subject, at: s.at, productId: s.productId, flags: s.autoRenew ? .on : [])
        case .billingIssue(let b):
            return row(AppleFactKind.billingIssue, b.subject, at: b.at, detail: b.statedBy, end: b.graceEnd)
        case .expiry(let e):
            return row(AppleFactKind.expiry, e.subject, at: e.at, detail: e.reason.rawValue, end: e.periodEnd)
        case .currency(let subject, let at, let code):
            return row(AppleFactKind.currency, subject, at: at, currency: code)
        case .user(let subject, let at, let id):
            return row(AppleFactKind.user, subject, at: at, ref: id)
        }
    }

    /// The typed fact of an Apple row; `nil` for a row of another kind or one missing a field its kind needs
    /// (a builder skips it, as it would skip a kind it does not know).
    public static func decode(_ row: Fact) -> AppleFact? {
        guard row.platform == .apple else { return nil }
        switch row.kind {
        case AppleFactKind.period:
            guard let ref = row.ref, let end = row.end else { return nil }
            let offer: AppleFact.Offer = row.flags.contains(.trial) ? .freeTrial
                : row.flags.isSuperset(of: [.introductory, .inferred]) ? .unstatedOffer
                : row.flags.contains(.introductory) ? .introductory : .none
            return .period(AppleFact.Period(subject: row.subject, transactionId: ref, start: row.at, end: end,
                                            productId: row.productId ?? "", webOrderLineItemId: row.detail,
                                            priceMicros: row.amountMicros, currency: row.currency, offer: offer,
                                            upgraded: row.flags.contains(.upgraded)))
        case AppleFactKind.oneTime:
            guard let ref = row.ref else { return nil }
            let quantity = row.detail.map { Int64($0) ?? 0 } ?? 1
            guard quantity >= 1 else { return nil }
            return .oneTime(AppleFact.OneTime(transactionId: ref, purchasedAt: row.at, productId: row.productId ?? "",
                                              priceMicros: row.amountMicros, currency: row.currency, quantity: quantity))
        case AppleFactKind.revocation:
            guard let ref = row.ref else { return nil }
            return .revocation(AppleFact.Revocation(subject: row.subject, transactionId: ref, at: row.at,
                                                    share: row.detail.flatMap { Int64($0) } ?? 100_000,
                                                    productId: row.productId ?? ""))
        case AppleFactKind.upgrade:
            guard let ref = row.ref else { return nil }
            return .upgrade(AppleFact.Upgrade(subject: row.subject, transactionId: ref, at: row.at))
        case AppleFactKind.refundReversed:
            guard let ref = row.ref else { return nil }
            return .refundReversed(AppleFact.RefundReversal(subject: row.subject, transactionId: ref, at: row.at,
                                                            productId: row.productId ?? ""))
        case AppleFactKind.renewalStatus:
            return .renewalStatus(AppleFact.RenewalStatus(subject: row.subject, at: row.at,
                                                          autoRenew: row.flags.contains(.on), productId: row.productId))
        case AppleFactKind.billingIssue:
            return .billingIssue(AppleFact.BillingIssue(subject: row.subject, at: row.at, graceEnd: row.end,
                                                        statedBy: row.detail ?? ""))
        case AppleFactKind.expiry:
            return .expiry(AppleFact.Expiry(subject: row.subject, at: row.at,
                                            reason: ExpirationReason(rawValue: row.detail ?? ""), periodEnd: row.end))
        case AppleFactKind.currency:
            guard let code = row.currency else { return nil }
            return .currency(subject: row.subject, at: row.at, code: code)
        case AppleFactKind.user:
            guard let id = row.ref else { return nil }
            return .user(subject: row.subject, at: row.at, id: id)
        default:
            return nil
        }
    }
}
