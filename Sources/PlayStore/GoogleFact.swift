import Facts

/// One statement of a Google Play payload, typed: a case per fact kind with named fields in stated units, where
/// the ledger's ``Fact`` rows have generic columns. The translator states these; ``GoogleFactCodec`` writes each
/// as its row (columns as ``GoogleFactKind`` documents them) and reads rows back for ``TokenFacts``. Every fact
/// is about one purchase token; every instant is ms UTC.
enum GoogleFact: Sendable, Hashable {
    /// A subscription resource (v1 or v2) as fetched at `at` (its statement time).
    case state(Snapshot)
    /// The token's subscription start (`startTimeMillis` / `startTime`).
    case start(token: String, at: Millis, productId: String?)
    /// A cancellation with a stated time; `reason` the v1 `cancelReason` (0 user; v2 states 0).
    case cancel(token: String, at: Millis, reason: Int?)
    /// A scheduled or current pause stated at `at`, resuming at `resumeAt`.
    case pause(token: String, at: Millis, resumeAt: Millis?)
    /// A voided (refunded, charged back, revoked) order: `refundType` when sent (a voided-purchase RTDN: 1 full,
    /// 2 quantity-based partial), and the units a quantity-based partial refund gave back (a voided-purchases
    /// item's `voidedQuantity`, sent for such refunds alone).
    case voided(token: String, at: Millis, order: String?, refundType: Int64?, quantity: Int64?)
    /// A subscription RTDN: its `notificationType` as sent (unknown numbers kept).
    case event(token: String, at: Millis, type: Int?, productId: String?)
    /// A one-time product RTDN: its `notificationType` (1 purchased, 2 canceled).
    case oneTimeEvent(token: String, at: Millis, type: Int?, productId: String?)
    /// A one-time product purchase: `purchaseState` 0 purchased, 1 canceled, 2 pending; the units bought
    /// (`quantity`, 1 when absent); the currency from the envelope (the price is never in the payload); `free`
    /// when it was not paid for (``Fact/Flags/free``).
    case oneTime(token: String, at: Millis, order: String?, purchaseState: Int?, quantity: Int64, productId: String?,
                 currency: String?, free: Bool = false)
    /// The token continues the subscription of token `from` (`linkedPurchaseToken`).
    case link(token: String, at: Millis, from: String)
    /// The app's user id of the token (`obfuscatedExternalAccountId`, envelope `app_user_id`).
    case user(token: String, at: Millis, id: String)
    /// The token is a test purchase (its every record is excluded).
    case testPurchase(token: String, at: Millis)

    /// What a fetched subscription resource shows.
    struct Snapshot: Sendable, Hashable {
        var token: String
        /// The statement time (the fetch time, or what the resource proves when logged without one).
        var at: Millis
        /// The order it shows (v1 `orderId`, v2 `latestOrderId`).
        var order: String?
        /// Its expiry (during grace: the grace end).
        var expiry: Millis?
        var state: GoogleSubscriptionState
        var productId: String?
        /// What the shown order costs, micro-units of ``currency`` (0 for a free trial); `nil` when not stated.
        var priceMicros: Int64?
        var currency: String?
        var trial = false
        var introductory = false
        var autoRenewing = false
        /// Logged without `received_at`: ``at`` is the lower bound the resource proves (`ShownPeriod`).
        var inferred = false
        /// ``order`` is known paid (``Fact/Flags/paidOrder``).
        var paidOrder = false
        /// The subscription was sold with an offer (``Fact/Flags/offer``).
        var offer = false
        /// The order funds a proration period (``Fact/Flags/prorated``): ``priceMicros`` is the plan's recurring
        /// price, not what the order charged.
        var prorated = false
    }
}

/// Writes ``GoogleFact``s as the ledger's ``Fact`` rows and reads them back. The row layout of each kind is
/// ``GoogleFactKind``'s; ``version`` is raised whenever it changes, and is part of ``PlayStoreTranslator/rulesVersion``.
enum GoogleFactCodec {
    /// The version of the row layout.
    /// 2: state rows carry `.paidOrder` and `.offer`.
    /// 3: `one_time` and `voided` rows carry their quantities (``QuantifiedCode``).
    /// 4: a v1 state's code carries its introductory offer (``GoogleSubscriptionState/introductoryOffer``).
    /// 5: state rows carry `.prorated`.
    /// 6: `one_time` rows carry `.free`.
    static let version: Int64 = 6

    /// The row of `fact`, stated at `observedAt`.
    static func encode(_ fact: GoogleFact, observedAt: Millis) -> Fact {
        let row = Fact.Rows(platform: .google, observedAt: observedAt)
        switch fact {
        case .state(let s):
            var flags: Fact.Flags = []
            if s.trial { flags.insert(.trial) }
            if s.introductory { flags.insert(.introductory) }
            if s.autoRenewing { flags.insert(.on) }
            if s.inferred { flags.insert(.inferred) }
            if s.paidOrder { flags.insert(.paidOrder) }
            if s.offer { flags.insert(.offer) }
            if s.prorated { flags.insert(.prorated) }
            return row(GoogleFactKind.state, s.token, at: s.at, ref: s.order, detail: s.state.code, productId: s.productId,
                       end: s.expiry, amountMicros: s.priceMicros, currency: s.currency, flags: flags)
        case .start(let token, let at, let productId):
            return row(GoogleFactKind.start, token, at: at, productId: productId)
        case .cancel(let token, let at, let reason):
            return row(GoogleFactKind.cancel, token, at: at, detail: reason.map(String.init))
        case .pause(let token, let at, let resumeAt):
            return row(GoogleFactKind.pause, token, at: at, end: resumeAt)
        case .voided(let token, let at, let order, let refundType, let quantity):
            return row(GoogleFactKind.voided, token, at: at, ref: order,
                       detail: QuantifiedCode(value: refundType, quantity: quantity).code)
        case .event(let token, let at, let type, let productId):
            return row(GoogleFactKind.event, token, at: at, detail: type.map(String.init), productId: productId)
        case .oneTimeEvent(let token, let at, let type, let productId):
            return row(GoogleFactKind.oneTimeEvent, token, at: at, detail: type.map(String.init), productId: productId)
        case .oneTime(let token, let at, let order, let purchaseState, let quantity, let productId, let currency, let free):
            return row(GoogleFactKind.oneTime, token, at: at, ref: order,
                       detail: QuantifiedCode(value: purchaseState.map(Int64.init), quantity: quantity == 1 ? nil : quantity).code,
                       productId: productId, currency: currency, flags: free ? .free : [])
        case .link(let token, let at, let from):
            return row(.link, token, at: at, ref: from)
        case .user(let token, let at, let id):
            return row(.user, token, at: at, ref: id)
        case .testPurchase(let token, let at):
            return row(.testPurchase, token, at: at)
        }
    }

    /// The typed fact of a Google row; `nil` for a row of another kind or one missing a field its kind needs.
    static func decode(_ row: Fact) -> GoogleFact? {
        guard row.platform == .google else { return nil }
        let token = row.subject
        switch row.kind {
        case GoogleFactKind.state:
            guard let state = GoogleSubscriptionState(code: row.detail ?? "") else { return nil }
            return .state(GoogleFact.Snapshot(
                token: token, at: row.at, order: row.ref, expiry: row.end, state: state, productId: row.productId,
                priceMicros: row.amountMicros, currency: row.currency, trial: row.flags.contains(.trial),
                introductory: row.flags.contains(.introductory), autoRenewing: row.flags.contains(.on),
                inferred: row.flags.contains(.inferred), paidOrder: row.flags.contains(.paidOrder),
                offer: row.flags.contains(.offer), prorated: row.flags.contains(.prorated)))
        case GoogleFactKind.start:
            return .start(token: token, at: row.at, productId: row.productId)
        case GoogleFactKind.cancel:
            return .cancel(token: token, at: row.at, reason: row.detail.flatMap { Int($0) })
        case GoogleFactKind.pause:
            return .pause(token: token, at: row.at, resumeAt: row.end)
        case GoogleFactKind.voided:
            guard let code = QuantifiedCode(code: row.detail) else { return nil }
            return .voided(token: token, at: row.at, order: row.ref, refundType: code.value, quantity: code.quantity)
        case GoogleFactKind.event:
            return .event(token: token, at: row.at, type: row.detail.flatMap { Int($0) }, productId: row.productId)
        case GoogleFactKind.oneTimeEvent:
            return .oneTimeEvent(token: token, at: row.at, type: row.detail.flatMap { Int($0) }, productId: row.productId)
        case GoogleFactKind.oneTime:
            guard let code = QuantifiedCode(code: row.detail) else { return nil }
            return .oneTime(token: token, at: row.at, order: row.ref, purchaseState: code.value.map { Int(truncatingIfNeeded: $0) },
                            quantity: code.quantity ?? 1, productId: row.productId, currency: row.currency,
                            free: row.flags.contains(.free))
        case Fact.Kind.link:
            guard let from = row.ref else { return nil }
            return .link(token: token, at: row.at, from: from)
        case Fact.Kind.user:
            guard let id = row.ref else { return nil }
            return .user(token: token, at: row.at, id: id)
        case Fact.Kind.testPurchase:
            return .testPurchase(token: token, at: row.at)
        default:
            return nil
        }
    }
}

extension GoogleFact.Snapshot {
    /// A snapshot whose booleans are the translator's working flags (`.trial`, `.introductory`, `.on` for
    /// auto-renewing, `.inferred`, `.paidOrder`, `.offer`, `.prorated`), as it collects them while reading a resource.
    init(token: String, at: Millis, order: String?, expiry: Millis?, state: GoogleSubscriptionState, productId: String?,
         priceMicros: Int64?, currency: String?, flags: Fact.Flags) {
        self.init(token: token, at: at, order: order, expiry: expiry, state: state, productId: productId,
                  priceMicros: priceMicros, currency: currency, trial: flags.contains(.trial),
                  introductory: flags.contains(.introductory), autoRenewing: flags.contains(.on),
                  inferred: flags.contains(.inferred), paidOrder: flags.contains(.paidOrder), offer: flags.contains(.offer),
                  prorated: flags.contains(.prorated))
    }
}
