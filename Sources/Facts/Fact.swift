/// One thing a store payload states about a subscription or a purchase: the unit the ledger stores.
///
/// Translators (`AppStore`, `PlayStore`) turn each record into facts; the ledger keeps the *set* of facts
/// (identical facts from several records are stored once), and at report time each store's history builder
/// turns the facts of one subscription back into a ``SubscriptionHistory``. Because the ledger keeps a set and
/// the builders are pure functions of it, the order in which records arrive never changes a number.
///
/// The columns are generic so that the ledger needs no knowledge of either store. Translators never fill them by
/// hand: each store states typed facts (`AppleFact`, `GoogleFact`) and its codec writes them as rows and reads
/// them back, with a version (docs/DESIGN.md); what each column means for a given ``kind`` is documented by the
/// store module that writes it (`AppleFactKind`, `GoogleFactKind`) and
/// summarised in `docs/DESIGN.md`. Only three kinds have a meaning the ledger relies on:
/// ``Kind/link`` (this subject continues the subject in ``ref``), ``Kind/user`` and ``Kind/testPurchase``.
public struct Fact: Sendable, Hashable {
    /// The largest price a record may state (micros): a billion units of any currency, more than any store
    /// charges (the App Store's highest price, about US$10,000, is some 250 million Vietnamese dong). A larger one
    /// is garbage or hostile, and summed would saturate a month's revenue; the record or part stating it is
    /// quarantined naming the field.
    public static let largestAmountMicros: Int64 = 1_000_000_000 * 1_000_000

    /// The store the fact comes from.
    public var platform: Platform
    /// What the fact is about: Apple `original_transaction_id`, Google purchase token, or for a one-time
    /// purchase its transaction id / token.
    public var subject: String
    /// What kind of statement this is; namespaced raw values such as `period`, `renewal_status`.
    public var kind: Kind
    /// The instant the fact is about (ms, UTC): a period's start, an event's time. Never the time it was logged.
    public var at: Millis
    /// When the store made the statement (ms, UTC): a notification's `signedDate` / `eventTimeMillis`, a
    /// receipt's `request_date_ms`, else the envelope's `received_at`. Later statements win when two disagree.
    public var observedAt: Millis
    /// A kind-specific identifier: a period's transaction id or order id, a linked purchase token, a user id.
    public var ref: String?
    /// A second kind-specific identifier or raw enum value (kept verbatim, also when unknown to us).
    public var detail: String?
    /// The product (Apple `product_id`, Google subscription / product id).
    public var productId: String?
    /// A second instant (ms, UTC): a period's end, a grace period's end, a scheduled resume.
    public var end: Millis?
    /// An amount in millionths of the currency's major unit (Google micros; Apple milliunits × 1000), from 0 to
    /// ``largestAmountMicros``.
    public var amountMicros: Int64?
    /// ISO 4217 currency code of ``amountMicros``, or the currency a record's context names.
    public var currency: String?
    /// Kind-specific booleans.
    public var flags: Flags

    public init(platform: Platform, subject: String, kind: Kind, at: Millis, observedAt: Millis,
                ref: String? = nil, detail: String? = nil, productId: String? = nil, end: Millis? = nil,
                amountMicros: Int64? = nil, currency: String? = nil, flags: Flags = []) {
        self.platform = platform
        self.subject = subject
        self.kind = kind
        self.at = at
        self.observedAt = observedAt
        self.ref = ref
        self.detail = detail
        self.productId = productId
        self.end = end
        self.amountMicros = amountMicros
        self.currency = currency
        self.flags = flags
    }

    /// Hashes the fields that tell facts of one payload apart (kind, instant, end, reference), not every
    /// string: sets of facts are built for every record, and hashing each subject, product and currency was
    /// most of their cost. Equality still compares every field.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(at)
        hasher.combine(end)
        hasher.combine(ref)
        hasher.combine(observedAt)
    }

    /// A fact kind: an open set of raw strings, so that a store module can add kinds without touching the ledger.
    public struct Kind: RawRepresentable, Sendable, Hashable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `subject` continues the subscription whose subject is `ref` (Google `linkedPurchaseToken`):
        /// the ledger joins such subjects into one subscription named by the first subject of the chain.
        public static let link: Kind = "link"
        /// `ref` is the app's own user id for `subject` (envelope `app_user_id`, Apple `appAccountToken`,
        /// Google `obfuscatedExternalAccountId`).
        public static let user: Kind = "user"
        /// `subject` is a test purchase (Google `purchaseType` 0, `testPurchase`): stated by the excluded record
        /// that shows it, at the purchase's start. Test status belongs to the token, so every record about this
        /// subject counts as excluded (`test`) and reports leave the subject out, whichever record came first.
        public static let testPurchase: Kind = "test_purchase"
    }

    /// Kind-specific booleans, stored as one integer.
    public struct Flags: OptionSet, Sendable, Hashable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// A free-trial period.
        public static let trial = Flags(rawValue: 1 << 0)
        /// Apple `is_upgraded`: the period was ended by an upgrade, its cancellation is not a refund.
        public static let upgraded = Flags(rawValue: 1 << 1)
        /// An on/off value of the kind is on (auto-renew on, in billing retry, ...).
        public static let on = Flags(rawValue: 1 << 2)
        /// An introductory (discounted, not free) price.
        public static let introductory = Flags(rawValue: 1 << 3)
        /// The value is an estimate the store did not state (e.g. a Google period start inferred from the
        /// previous expiry, the fetch time of a Google resource logged without one); a stated value for the same
        /// thing wins over it.
        public static let inferred = Flags(rawValue: 1 << 4)
        /// The order a Google resource shows was paid (v2 `lineItems[].latestSuccessfulOrderId`), not possibly a
        /// renewal still awaiting its payment (v1 `orderId`, v2 `latestOrderId`).
        public static let paidOrder = Flags(rawValue: 1 << 5)
        /// The Google subscription was sold with an introductory price (v1 `introductoryPriceInfo`): orders the
        /// archive does not show may have cost less than the ones it does. (A v2 `offerId` names a free trial as
        /// often as a discount, and a v2 resource in an introductory phase is `.introductory` itself.)
        public static let offer = Flags(rawValue: 1 << 6)
        /// The Google order funds a proration period (v2 `lineItems[].offerPhase.prorationPeriod`): time a change
        /// of plan credited, or an add-on aligned with its base plan. What it was charged depends on the
        /// replacement mode, which no resource states (nothing with time proration, a prorated difference, the
        /// full price); the amount beside it is the plan's recurring price, which its MRR runs at.
        public static let prorated = Flags(rawValue: 1 << 7)
        /// The Google one-time product was not paid for: `purchaseType` 1 (bought with a promo code) or 2 (a
        /// reward, for watching an ad instead of paying). No sale, so no transaction.
        public static let free = Flags(rawValue: 1 << 8)
    }
}

extension Fact {
    /// The rows a store's fact codec writes for one statement: every row of `platform`, stated at `observedAt`
    /// (ms, UTC), so that each kind's layout names only what it fills.
    public struct Rows: Sendable {
        public let platform: Platform
        public let observedAt: Millis

        public init(platform: Platform, observedAt: Millis) {
            self.platform = platform
            self.observedAt = observedAt
        }

        public func callAsFunction(_ kind: Kind, _ subject: String, at: Millis, ref: String? = nil,
                                   detail: String? = nil, productId: String? = nil, end: Millis? = nil,
                                   amountMicros: Int64? = nil, currency: String? = nil, flags: Flags = []) -> Fact {
            Fact(platform: platform, subject: subject, kind: kind, at: at, observedAt: observedAt, ref: ref,
                 detail: detail, productId: productId, end: end, amountMicros: amountMicros, currency: currency,
                 flags: flags)
        }
    }
}

extension Fact {
    /// The end of the store history builders' total orders of facts, read where they lie (for
    /// ``Swift/Array/sortInPlace(by:)``): product, amount, currency (an absent value first), then flags.
    public static func precedesInLastColumns(_ a: UnsafePointer<Fact>, _ b: UnsafePointer<Fact>) -> Bool {
        if a.pointee.productId != b.pointee.productId {
            return (a.pointee.productId ?? "") < (b.pointee.productId ?? "")
        }
        if a.pointee.amountMicros != b.pointee.amountMicros {
            return (a.pointee.amountMicros ?? .min) < (b.pointee.amountMicros ?? .min)
        }
        if a.pointee.currency != b.pointee.currency { return (a.pointee.currency ?? "") < (b.pointee.currency ?? "") }
        return a.pointee.flags.rawValue < b.pointee.flags.rawValue
    }
}
