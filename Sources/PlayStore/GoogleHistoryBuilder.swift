import Facts

/// Rebuilds one Google subscription from the set of its facts (docs/DESIGN.md "Google").
///
/// Google resources show only the current state, so the history is replayed from every resource and
/// notification of every token of the chain (tokens joined by `linkedPurchaseToken`), in time order whatever
/// order they were stored in: the same set of facts always gives the same history. Per token, ``TokenTimeline``
/// rebuilds orders and billing episodes; here the tokens are joined (an old token's order ends where the
/// token replacing it starts, `.replaced`), revocations are applied (a voided order by its id, REVOKED to the
/// order current then), and one-time products become ``OneTimePurchase``s.
///
/// Test purchases: a token some record marked (``Fact/Kind/testPurchase``) is left out with all its facts, its
/// RTDNs included, whatever order they were stored in. Test status belongs to the token, so in a chain only the
/// marked tokens go: a paid token linked from a test one (a tester's upgrade paid with a real account) starts its
/// own history as if it had no predecessor.
public struct GoogleHistoryBuilder: Sendable {
    /// A builder; it holds no state, so one serves every chain.
    public init() {}

    /// The history of the chain named by its first token `id`, from the facts of every token of the chain
    /// (each fact's `subject` is its own token). Facts of other platforms are ignored.
    public func history(id: String, facts: [Fact]) -> SubscriptionHistory {
        var bySubject: [String: [Fact]] = [:]
        for fact in Set(facts) where fact.platform == .google {
            bySubject[fact.subject, default: []].append(fact)
        }
        let tokens = bySubject.keys.sorted().map { TokenFacts(token: $0, facts: bySubject[$0] ?? []) }.filter { !$0.isTest }

        var periodsByToken: [String: [Period]] = [:]
        var episodes: [BillingEpisode] = []
        var purchases: [OneTimePurchase] = []
        var currencies: Set<String> = []
        var notifiedOnly: [UnheldStatement] = []
        var unplaced: [UnheldStatement] = []
        for token in tokens {
            // A pending purchase cancelled before it was paid (SUBSCRIPTION_PENDING_PURCHASE_CANCELED) never had one.
            let notices = token.events.filter { $0.type != GoogleNotificationType.pendingPurchaseCanceled.rawValue }
            if token.snapshots.isEmpty, let first = notices.first {
                let product = notices.first { $0.productId != nil }?.productId ?? ""
                notifiedOnly.append(UnheldStatement(productId: product, at: first.at))
            }
            let timeline = TokenTimeline(token)
            var periods = timeline.periods
            periods += renewalsProvenByVoids(token, after: periods, episodes: timeline.episodes)
            let unmatched = applyRevocations(token, to: &periods)
            periodsByToken[token.token] = periods
            episodes += timeline.episodes
            let bought = oneTimePurchases(token, hasPeriods: !periods.isEmpty)
            purchases += bought
            if bought.isEmpty { unplaced += unplacedVoids(unmatched, of: token, periods: periods) }
            for snapshot in token.snapshots { if let c = snapshot.currency { currencies.insert(c) } }
            for fact in token.oneTimes { if let c = fact.currency { currencies.insert(c) } }
        }
        for token in tokens {
            // A v2 resource of a deferred replacement (`deferredItemReplacement`) shows the old subscription's order
            // until the change takes effect: that order, and any the new token's replay filled in before it, are
            // the old token's, not charges of the new one.
            let oldOrders = Set(token.linkedFrom.flatMap { periodsByToken[$0]?.map(\.id) ?? [] })
            periodsByToken[token.token]?.removeAll { oldOrders.contains($0.id) }
            // The new token's first order: a token with none has replaced nothing yet (a deferred change pending).
            guard let newStart = periodsByToken[token.token]?.first?.start else { continue }
            // A deferred change (v1 `paymentState` 3) took effect when the old order ended, whenever a resource
            // first showed it running.
            let deferred = token.snapshots.contains { $0.state.paymentState == 3 }
            for old in token.linkedFrom {
                guard var oldPeriods = periodsByToken[old] else { continue }
                // Google links only a subscription still running (an upgrade, a downgrade, a re-signup before it
                // lapsed): when the old token's last order ended before the change with nothing saying why (no
                // cancellation, billing issue or pause), it renewed, and no record showed those renewals.
                if !deferred, let last = oldPeriods.last, last.endReason == .unknown,
                   !episodes.contains(where: { $0.failedAt == last.end }) {
                    oldPeriods += TokenTimeline.renewals(after: last, until: newStart)
                }
                periodsByToken[old] = replaced(oldPeriods, at: newStart)
            }
        }
        var periods = periodsByToken.values.flatMap { $0 }
        periods.sort { ($0.start, $0.id) < ($1.start, $1.id) }
        for period in periods { if let c = period.currency { currencies.insert(c) } }
        episodes.sort { ($0.failedAt, $0.graceEnd) < ($1.failedAt, $1.graceEnd) }
        purchases.sort { ($0.purchasedAt, $0.id) < ($1.purchasedAt, $1.id) }
        var history = SubscriptionHistory(platform: .google, id: id, periods: periods, episodes: episodes,
                                          purchases: purchases, currencies: currencies.sorted())
        history.notifiedOnlyTokens = notifiedOnly
        history.unplacedRefunds = unplaced
        return history
    }

    /// An upgrade, downgrade or re-signup: the order current at the new token's start ends there (`.replaced`,
    /// no churn, its sold length kept for its duration); orders of the old token starting after it never happened.
    func replaced(_ periods: [Period], at newStart: Millis) -> [Period] {
        periods.compactMap { period in
            guard period.start < newStart else { return nil }
            var period = period
            if newStart <= period.end {
                period.end(replacedAt: newStart)
                period.endReason = .replaced
            }
            return period
        }
    }

    /// The renewals a voided purchase proves charged after the last order any other record shows: a void of order
    /// `..N` of the same numbering means orders up to `..N` were bought. They are filled in back to back, one
    /// billing period each (``TokenTimeline/renewals(after:until:)``), when nothing says why the last known order
    /// ended (no cancellation, expiry or billing issue) and that cadence starts the voided order before the void
    /// (else a hold or pause no record showed came between, and nothing dates it): otherwise the refund would be
    /// dropped and the renewals' charges with it. Renewals after the voided one are not assumed.
    func renewalsProvenByVoids(_ token: TokenFacts, after periods: [Period], episodes: [BillingEpisode]) -> [Period] {
        guard let last = periods.last, last.endReason == .unknown, !episodes.contains(where: { $0.failedAt == last.end }),
              let (base, _) = GoogleOrderId.split(last.id) else { return [] }
        let known = GoogleOrderId.index(last.id)
        var proven: [Period] = []
        for void in token.voids.sorted(by: { $0.at < $1.at }) {
            guard let order = void.order, let (voidBase, _) = GoogleOrderId.split(order), voidBase == base else { continue }
            let index = GoogleOrderId.index(order)
            guard index > known + Int64(proven.count) else { continue }
            let filled = TokenTimeline.renewals(after: last, until: void.at + 1)
            guard filled.count >= Int(index - known) else { continue }
            proven = Array(filled.prefix(Int(index - known)))
        }
        return proven
    }

    /// `unmatched`, the voids of a token (not a one-time purchase's, which refund it) that no order of `periods`
    /// holds (``applyRevocations(_:to:)``): a voided order no record showed and no rule could fill in (after a free
    /// trial, an introductory order, a billing issue), a void without an order id before the first order, or any
    /// void of a token nothing else shows (the voided-purchases list names refunded orders of the app, archived or
    /// not, one-time products by default). Each refunds a charge no table holds, and the report says so. The same
    /// void listed and notified (its RTDN) is one: by order id, else by time within a day.
    func unplacedVoids(_ unmatched: [TokenFacts.Voided], of token: TokenFacts, periods: [Period]) -> [UnheldStatement] {
        let named: [String?] = [periods.last?.productId, token.snapshots.last?.productId,
                                token.events.first { $0.productId != nil }?.productId,
                                token.oneTimeEvents.first { $0.productId != nil }?.productId,
                                token.oneTimes.first { $0.productId != nil }?.productId]
        let product = named.lazy.compactMap { $0 }.first ?? ""
        var orders: Set<String> = []
        var unordered: [Millis] = []
        var unplaced: [UnheldStatement] = []
        for void in unmatched.sorted(by: { $0.at < $1.at }) {
            if let order = void.order {
                guard orders.insert(order).inserted else { continue }
            } else {
                guard !unordered.contains(where: { abs($0 - void.at) <= 86_400_000 }) else { continue }
                unordered.append(void.at)
            }
            unplaced.append(UnheldStatement(productId: product, at: void.at))
        }
        return unplaced
    }

    /// Voided orders (by order id; without one, the order current at the voiding) and REVOKED notifications
    /// (the order current then) set `revokedAt`, the earliest statement winning.
    /// - Returns: the voids no period holds.
    func applyRevocations(_ token: TokenFacts, to periods: inout [Period]) -> [TokenFacts.Voided] {
        func revoke(_ index: Int, at t: Millis) {
            periods[index].revokedAt = min(periods[index].revokedAt ?? t, t)
        }
        func current(at t: Millis) -> Int? {
            periods.lastIndex { $0.start <= t && t < $0.end } ?? periods.lastIndex { $0.start <= t }
        }
        var unmatched: [TokenFacts.Voided] = []
        for void in token.voids {
            let index = void.order.map { order in periods.firstIndex { $0.id == order } } ?? current(at: void.at)
            if let index { revoke(index, at: void.at) } else { unmatched.append(void) }
        }
        for event in token.events where event.type == GoogleNotificationType.revoked.rawValue {
            if let index = current(at: event.at) { revoke(index, at: event.at) }
        }
        return unmatched
    }

    /// The one-time product bought with this token: from `purchases.products.get` showing it purchased
    /// (`purchaseState` 0), else a ONE_TIME_PRODUCT_PURCHASED (1) notification, else a resource showing it
    /// cancelled (1) when a voided purchase of it proves it was paid first; refunded by its voided purchases
    /// (``refunds(of:voids:)``). None when a resource shows it was not paid for (a promo code, a reward), which
    /// the notification does not say.
    func oneTimePurchases(_ token: TokenFacts, hasPeriods: Bool) -> [OneTimePurchase] {
        guard !hasPeriods, !token.oneTimes.contains(where: \.free) else { return [] }
        var purchase: OneTimePurchase?
        if let bought = token.oneTimes.filter({ $0.purchaseState == nil || $0.purchaseState == 0 }).min(by: { $0.at < $1.at }) {
            let currency = token.oneTimes.last { $0.currency != nil }?.currency
            purchase = OneTimePurchase(id: bought.order ?? token.token, productId: bought.productId ?? "",
                                       purchasedAt: bought.at, currency: currency, quantity: bought.quantity)
        } else if let event = token.oneTimeEvents.filter({ $0.type == 1 }).min(by: { $0.at < $1.at }) {
            // Announced, while the token's resource (if any) showed it pending: the quantity and currency are the
            // resource's, the notification states neither.
            let stated = token.oneTimes.last
            purchase = OneTimePurchase(id: token.token, productId: event.productId ?? stated?.productId ?? "",
                                       purchasedAt: event.at, currency: token.oneTimes.last { $0.currency != nil }?.currency,
                                       quantity: stated?.quantity ?? 1)
        } else if let cancelled = token.oneTimes.filter({ $0.purchaseState == 1 }).min(by: { $0.at < $1.at }),
                  let void = token.voids.filter({ $0.order == nil || cancelled.order == nil || $0.order == cancelled.order })
                      .min(by: { $0.at < $1.at }) {
            // Fetched only after its refund, which Google shows as cancelled: the voided purchase proves it was
            // paid (a pending purchase cancelled unpaid is never voided). Bought at the resource's purchase time,
            // never after the void (a v2 resource without a completion time is dated by its fetch).
            purchase = OneTimePurchase(id: cancelled.order ?? token.token, productId: cancelled.productId ?? "",
                                       purchasedAt: min(cancelled.at, void.at),
                                       currency: token.oneTimes.last { $0.currency != nil }?.currency,
                                       quantity: cancelled.quantity)
        }
        guard var purchase else { return [] }
        purchase.refunds = refunds(of: purchase, voids: token.voids.filter {
            $0.order == nil || $0.order == purchase.id || purchase.id == token.token
        })
        return [purchase]
    }

    /// The refunds `voids` make of `purchase`, each at its own time and worked out from the voids up to it only
    /// (so that a report cut at an as-of gives the same refunds before it whatever came after). In time order:
    /// a voided-purchases item with `voidedQuantity` gives back that many units (a quantity-based partial
    /// refund; never more than are left); any other void (an item without it, an RTDN of a full refund or of
    /// none stated) gives back what is left. An RTDN of a partial refund (`refundType` 2) states no units: an item
    /// dated within a day of it is the same refund, stated; alone, it gives back what is left, as the whole.
    func refunds(of purchase: OneTimePurchase, voids: [TokenFacts.Voided]) -> [OneTimePurchase.Refund] {
        let quantity = purchase.quantity
        let stated = voids.filter { $0.quantity != nil }.map(\.at)
        let day: Millis = 86_400_000
        var refunds: [OneTimePurchase.Refund] = []
        var refunded: Int64 = 0
        for void in voids.sorted(by: { ($0.at, $0.quantity ?? 0) < ($1.at, $1.quantity ?? 0) }) where refunded < quantity {
            let units: Int64
            if let stated = void.quantity {
                units = min(stated, quantity - refunded)
            } else if void.refundType == 2, stated.contains(where: { abs($0 - void.at) <= day }) {
                continue
            } else {
                units = quantity - refunded
            }
            refunds.append(OneTimePurchase.Refund(at: void.at, parts: units, whole: quantity))
            refunded += units
        }
        return refunds
    }
}
