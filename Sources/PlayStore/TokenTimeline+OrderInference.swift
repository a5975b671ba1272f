import Facts

/// Where the orders of a token that no record showed begin and end, and what a resource proves of the order it
/// shows: the order arithmetic ``TokenReplay`` relies on. Google numbers a subscription's orders (`GPA.x`, then
/// `GPA.x..0`, `GPA.x..1`, ...), so an order shown proves those before it; their dates come from the billing
/// period, counted back from a shown expiry or on from a known order's end (``ShownPeriod``).
extension TokenTimeline {
    /// The longest grace period Google offers (ms): 30 days, the most a base plan can set.
    static let longestGrace: Millis = 30 * 86_400_000

    /// The longest run of orders no resource showed that is filled in between two that were (a hostile `..N`
    /// must not make millions of periods).
    private static let longestMissingRun: Int64 = 1_000

    /// Where an order first shown while the subscription was active (or before anything was known) began, and the
    /// orders before it that no resource showed (``missingOrders(after:before:expiry:facts:shownBy:)``):
    /// - after a known order, where the orders between them end (at that order's end when none are missing, unless
    ///   its expiry shows it began later: ``resumedAfterGap(_:expiry:after:shownAt:announced:shownBy:)``);
    /// - the first order (`GPA.x`) at the subscription's `startTime`;
    /// - a renewal whose predecessors no fetch showed, when the archive holds the purchase's notice: after them,
    ///   filled in from `startTime` (``ordersBefore(_:from:base:start:length:expiry:shownBy:after:)``);
    /// - a renewal whose predecessors the archive never showed (it begins mid-life, or a backfill logged only
    ///   current states) one billing period before its expiry (``ShownPeriod``), not at the fetch, which may come
    ///   any time while it runs; or at the RENEWED / RECOVERED notification that announced it, when that is no
    ///   more than three days earlier.
    static func place(_ order: String, expiry: Millis, shownAt t: Millis, announced: Millis?,
                              after previous: Period?, facts: TokenFacts, shownBy snapshot: GoogleFact.Snapshot,
                              notifiedFailure: Millis? = nil) -> (start: Millis, missing: [Period]) {
        if let previous {
            let missing = missingOrders(after: previous, before: order, expiry: expiry, facts: facts, shownBy: snapshot)
            if missing.isEmpty, let resumed = resumedAfterGap(order, expiry: expiry, after: previous, shownAt: t,
                                                              announced: announced, shownBy: snapshot) {
                return (resumed, [])
            }
            return (missing.last?.end ?? previous.end, missing)
        }
        let index = GoogleOrderId.index(order)
        if index == 0 { return (facts.start ?? announced ?? t, []) }
        guard let subscriptionStart = facts.start else { return (announced ?? t, []) }
        // The archive holds the purchase itself (its SUBSCRIPTION_PURCHASED notice, at `startTime`) though no fetch
        // of the first orders: their numbers prove them, from the start on, as between two fetched orders. (A
        // backfill that begins mid-life holds no such notice, and nothing is made up before it.)
        let day: Millis = 86_400_000
        if index <= longestMissingRun, let (base, _) = GoogleOrderId.split(order),
           facts.events.contains(where: { $0.type == GoogleNotificationType.purchased.rawValue && abs($0.at - subscriptionStart) <= day }) {
            var missing: [Period] = []
            if let failure = notifiedFailure, let length = ShownPeriod.candidates.first(where: { candidate in
                candidate.back(-index, from: subscriptionStart).map { abs($0 - failure) <= day } ?? false
            }) {
                // A billing issue notified at `failure`: they ran from the start to it, one period each (after a
                // hold the order shown keeps no date of theirs).
                var start = subscriptionStart
                for position in 0..<index {
                    guard let end = length.back(-1, from: start), end > start else { break }
                    missing.append(filled(base: base, index: position, start: start, end: end, shownBy: snapshot, after: nil))
                    start = end
                }
                if missing.count != Int(index) { missing = [] }
            } else if let failure = notifiedFailure, index == 1, failure > subscriptionStart, failure - subscriptionStart < 7 * day {
                // A first order shorter than any plan Google sells (a week), before a renewal notified failed: a
                // free trial of a few days.
                var trial = Period(id: base, productId: snapshot.productId ?? "", start: subscriptionStart, end: failure,
                                   isTrial: true, priceMicros: 0, currency: snapshot.currency)
                trial.isFilledIn = true
                missing = [trial]
            } else if let length = ShownPeriod.billingPeriod(subscriptionStart: subscriptionStart, expiry: expiry, orderIndex: index) {
                // Else back to back up to the order shown, when they reach the notice that announced it (a gap no
                // notice explains, as a hold's, leaves them out).
                let placed = ordersBefore(index, from: 0, base: base, start: subscriptionStart, length: length, expiry: expiry,
                                          shownBy: snapshot, after: nil)
                if let end = placed.last?.end, announced.map({ $0 <= end + day }) ?? true { missing = placed }
            }
            // The first may have been a free trial, which no resource says: counted as paid, and said
            // (``Period/isAssumedPaid``), unless the token continues another.
            if !missing.isEmpty, !missing[0].isTrial { missing[0].isAssumedPaid = facts.linkedFrom.isEmpty }
            if let last = missing.last { return (last.end, missing) }
        }
        let shown = min(t, ShownPeriod.start(subscriptionStart: subscriptionStart, expiry: expiry, orderIndex: index))
        if let announced, announced >= shown - 3 * 86_400_000 { return (announced, []) }
        return (shown, [])
    }

    /// The order a SUBSCRIPTION_RENEWED notification at `t` announces after `last`, the latest order of a running
    /// subscription, before any fetch shows it (one that does replaces what is inferred here): the next order of
    /// `last`'s numbering (`..N`), charged at `last`'s end and running one billing period, the length `last` was
    /// sold with (one of ``ShownPeriod/candidates``, within a day), filled in, at `last`'s price and currency when
    /// it renews the same product and no price change was notified since `last` began, else unpriced. `nil` when
    /// `last` has no order number, ran no whole billing period as a full-price paid order (a free trial, an offer,
    /// a proration, one assumed paid, one cut short), or ends more than a day after `t` (the notice is about an
    /// order already shown). An order recovered in grace ran from the recovery but was billed from the failed
    /// renewal E, whose date it kept (`billedFrom`): its length is counted from there.
    ///
    /// After a billing issue or a pause the notice is the recovery or the resume, at `recoveredAt`: the order
    /// starts there, and runs to one period after `last`'s end when the billing date stays (a recovery in grace),
    /// else one period after the recovery (a recovery from account hold, a resume).
    static func announcedRenewal(after last: Period, at t: Millis, productId: String?, facts: TokenFacts,
                                         billedFrom: Millis? = nil, recoveredAt: Millis? = nil,
                                         keepsBillingDate: Bool = true) -> Period? {
        let day: Millis = 86_400_000
        guard !last.isTrial, !last.isIntroductory, !last.isProration, !last.isAssumedPaid, last.end - day <= t,
              let (base, _) = GoogleOrderId.split(last.id) else { return nil }
        let index = GoogleOrderId.index(last.id)
        guard index < GoogleOrderId.largestRenewal, let length = soldLength(of: last, billedFrom: billedFrom),
              case let start = recoveredAt ?? last.end,
              let end = length.back(-1, from: keepsBillingDate ? last.end : start), end > start, end > t else { return nil }
        let product = productId ?? last.productId
        let priceChanged = facts.events.contains { event in
            event.at >= last.start && event.at <= t
                && (event.type == GoogleNotificationType.priceChangeConfirmed.rawValue
                    || event.type == GoogleNotificationType.priceChangeUpdated.rawValue)
        }
        var renewal = Period(id: GoogleOrderId.id(base: base, index: index + 1), productId: product, start: start, end: end,
                             priceMicros: product == last.productId && !priceChanged ? last.priceMicros : nil,
                             currency: last.currency)
        renewal.isFilledIn = true
        return renewal
    }

    /// Whether `snapshot` shows the renewal the system could not charge: expired with `cancelReason` 1 (a billing
    /// problem) or a declined price increase, its order a renewal (`..N`: a first order is no renewal) not known
    /// paid.
    static func showsDeclinedOrder(_ snapshot: GoogleFact.Snapshot) -> Bool {
        guard snapshot.state.state == GoogleSubscriptionState.expired, !snapshot.paidOrder,
              GoogleOrderId.index(snapshot.order) >= 1, let reason = snapshot.state.cancelReason else { return false }
        return reason == 1 || reason == GoogleSubscriptionState.declinedPriceIncrease
    }

    /// The renewals between `last` and `order`, the renewal the system could not charge (``showsDeclinedOrder(_:)``),
    /// that no record showed: their `..N` numbers, below the declined one's, prove them paid. Back to back from
    /// `last`'s end, one billing period each: the length `last` was sold for (one of ``ShownPeriod/candidates``,
    /// within a day), or, after a first order shorter than a period (a trial), the period that puts the last of
    /// them where the resource's expiry shows the failure (``ShownPeriod``). Each at the recurring price the
    /// resource states (unpriced when it shows an offer). The failure they end at must be where the resource shows
    /// it: its expiry is the end of grace (or of the order, without grace), at most ``longestGrace`` and an account
    /// hold after it, and the fetch came after both. None when the orders are not of one numbering, `last` was a
    /// proration or a renewal's trial or offer (whose length says nothing of the plan's), or they do not fit.
    static func renewalsBefore(declined order: String, after last: Period, shownBy snapshot: GoogleFact.Snapshot,
                                       facts: TokenFacts) -> [Period] {
        let day: Millis = 86_400_000
        guard let (base, _) = GoogleOrderId.split(order), let (lastBase, _) = GoogleOrderId.split(last.id), base == lastBase,
              !last.isProration else { return [] }
        let first = GoogleOrderId.index(last.id) + 1, declinedIndex = GoogleOrderId.index(order)
        guard declinedIndex - first > 0, declinedIndex - first <= longestMissingRun else { return [] }
        let length: ShownPeriod.Length?
        if !last.isTrial, !last.isIntroductory {
            length = soldLength(of: last)
        } else if first == 1, let start = facts.start, let expiry = snapshot.expiry {
            length = ShownPeriod.billingPeriod(subscriptionStart: start, expiry: expiry, orderIndex: declinedIndex - 1)
        } else {
            length = nil
        }
        guard let length else { return [] }
        var renewals: [Period] = []
        var start = last.end
        for index in first..<declinedIndex {
            guard let end = length.back(-1, from: start), end > start, end <= snapshot.at else { return [] }
            renewals.append(filled(base: base, index: index, start: start, end: end, shownBy: snapshot, after: last))
            start = end
        }
        if let expiry = snapshot.expiry, start > expiry + day || start < expiry - 2 * longestGrace - day { return [] }
        return renewals
    }

    /// Where `order`, the renewal right after `previous`, began when no record showed the interruption before it (an
    /// account hold or a pause polls missed): one billing period, the one `previous` ran as a whole full-price
    /// order of the same product, before its `expiry`, when that is more than a day after `previous` ended (and
    /// not after the fetch at `t`). `nil` when the orders ran back to back, a renewal notice `announced` it at
    /// `previous`'s end, or nothing gives the period.
    private static func resumedAfterGap(_ order: String, expiry: Millis, after previous: Period, shownAt t: Millis,
                                        announced: Millis?, shownBy snapshot: GoogleFact.Snapshot) -> Millis? {
        let day: Millis = 86_400_000
        guard announced.map({ abs($0 - previous.end) > day }) ?? true,
              !previous.isTrial, !previous.isIntroductory, !previous.isProration, !previous.isAssumedPaid,
              snapshot.productId == previous.productId, !snapshot.trial, !snapshot.introductory, !snapshot.prorated,
              let (base, _) = GoogleOrderId.split(order), GoogleOrderId.split(previous.id)?.base == base,
              GoogleOrderId.index(order) == GoogleOrderId.index(previous.id) + 1,
              let length = soldLength(of: previous),
              let begun = length.back(1, from: expiry), begun > previous.end + day, begun <= t else { return nil }
        return begun
    }

    /// The renewals of `last`, a whole full-price order, from its end up to the one current at `t`, which no record
    /// showed: back to back, one billing period each (the one `last` was sold with), at `last`'s product and price.
    /// Empty when `last` ends at or after `t` or nothing gives the period.
    static func renewals(after last: Period, until t: Millis) -> [Period] {
        guard last.end < t, !last.isTrial, !last.isIntroductory, !last.isProration, !last.isAssumedPaid,
              let (base, _) = GoogleOrderId.split(last.id), let length = soldLength(of: last) else { return [] }
        var renewals: [Period] = []
        var start = last.end
        var index = GoogleOrderId.index(last.id) + 1
        while start < t, index <= GoogleOrderId.largestRenewal, renewals.count < longestMissingRun,
              let end = length.back(-1, from: start), end > start {
            var renewal = Period(id: GoogleOrderId.id(base: base, index: index), productId: last.productId, start: start,
                                 end: end, priceMicros: last.priceMicros, currency: last.currency)
            renewal.isFilledIn = true
            renewals.append(renewal)
            start = end
            index += 1
        }
        return renewals
    }

    /// When a subscription recovered from account hold or resumed from a pause that no notice dated, read from
    /// `order`, the first order a resource shows after it: Google starts a new billing date then, so that order (and
    /// those its `..N` number proves charged between, usually none) began whole billing periods before its
    /// `expiry` (``periodsSince(_:expiry:after:)``); `nil` when no period puts the restart after `since` (the last
    /// record still showing the issue) and no later than the fetch at `t`, within a day.
    static func restart(of order: String, expiry: Millis, after last: Period, since: Millis, fetchedAt t: Millis) -> Millis? {
        let day: Millis = 86_400_000
        guard let start = periodsSince(order, expiry: expiry, after: last)
            .first(where: { $0 >= since - day && $0 <= t + day }) else { return nil }
        return min(max(start, since), t)
    }

    /// Whether `order`, the first order a resource shows after a billing issue that began at `failedAt`, kept the
    /// billing date: its orders began at `failedAt`, within a day, as after a recovery in grace (a recovery from
    /// account hold starts a new one). Counted with the period `last` was sold with when it ran one (another
    /// length could reach `failedAt` from a new billing date: two months back from a hold's recovery a month
    /// late), else with any of ``ShownPeriod/candidates``.
    static func keepsBillingDate(_ order: String, expiry: Millis, after last: Period, failedAt: Millis) -> Bool {
        let starts = periodsSince(order, expiry: expiry, after: last)
        let sold = soldLength(of: last) == nil || last.isTrial || last.isIntroductory ? starts : Array(starts.prefix(1))
        return sold.contains { abs($0 - failedAt) <= 86_400_000 }
    }

    /// Where the orders after `last` up to `order` (its `..N` number proves how many) began, if they ran back to
    /// back to `order`'s `expiry`, one billing period each: for the period `last` was sold with first, then for
    /// each of ``ShownPeriod/candidates``. Empty when the orders are not of one numbering.
    private static func periodsSince(_ order: String, expiry: Millis, after last: Period) -> [Millis] {
        guard let (base, _) = GoogleOrderId.split(order), let (lastBase, _) = GoogleOrderId.split(last.id), base == lastBase
        else { return [] }
        let count = GoogleOrderId.index(order) - GoogleOrderId.index(last.id)
        guard count >= 1, count <= longestMissingRun else { return [] }
        return ((soldLength(of: last).map { [$0] } ?? []) + ShownPeriod.candidates).compactMap { $0.back(count, from: expiry) }
    }

    /// The billing period `period` was sold with: the first of ``ShownPeriod/candidates`` that, counted on from its
    /// start (or `billedFrom`, where an order recovered in grace was billed from), reaches the end it was sold with
    /// (before any deferral), within a day; or back from that end to the start. (Both ways, as months clamp at a
    /// month's end: January 30 plus a month is February 28, from which a month back is January 28.) `nil` for an
    /// order shorter or longer than any.
    private static func soldLength(of period: Period, billedFrom: Millis? = nil) -> ShownPeriod.Length? {
        let soldEnd = period.scheduledEnd ?? period.end, billed = billedFrom ?? period.start
        let day: Millis = 86_400_000
        return ShownPeriod.candidates.first { candidate in
            (candidate.back(-1, from: billed).map { abs($0 - soldEnd) <= day } ?? false)
                || (candidate.back(1, from: soldEnd).map { abs($0 - billed) <= day } ?? false)
        }
    }

    /// The orders from a recovery or a resume at `resumedAt` up to `order`, the first one a resource shows after
    /// it, that no resource showed: `order`'s number proves them charged after `last`, the last order before the
    /// billing issue or the pause. Back to back, one billing period each, ending one period before `order`'s
    /// expiry, the first from `resumedAt`. The period is the first of ``ShownPeriod/candidates`` whose orders,
    /// counted back from that expiry, begin where the first could: at the recovery (a recovery from account
    /// hold or a resume starts a new billing date, ±1 day) or after `last`'s end (one in grace keeps it). Priced as
    /// ``missingOrders(after:before:expiry:facts:shownBy:)`` prices them. None when the orders are not of one
    /// numbering, none is missing, or no period fits.
    static func ordersResumed(at resumedAt: Millis, after last: Period, before order: String, expiry: Millis,
                                      shownBy snapshot: GoogleFact.Snapshot) -> [Period] {
        let day: Millis = 86_400_000
        guard let (base, _) = GoogleOrderId.split(order), let (lastBase, _) = GoogleOrderId.split(last.id), base == lastBase
        else { return [] }
        let first = GoogleOrderId.index(last.id) + 1, shownIndex = GoogleOrderId.index(order)
        let count = shownIndex - first
        guard count > 0, count <= longestMissingRun,
              let length = ShownPeriod.candidates.first(where: { candidate in
                  candidate.back(count + 1, from: expiry).map { $0 >= last.end - day && $0 <= resumedAt + day } ?? false
              }) else { return [] }
        return ordersBefore(shownIndex, from: first, base: base, start: resumedAt, length: length, expiry: expiry,
                            shownBy: snapshot, after: last)
    }

    /// Orders `first..<shownIndex` of the numbering `base`, which no resource showed, back to back from `start`,
    /// each ending a whole number of `length`s before `expiry`, the shown order's
    /// (``filled(base:index:start:end:shownBy:after:)``). None when they would not fit after `start`.
    private static func ordersBefore(_ shownIndex: Int64, from first: Int64, base: String, start: Millis,
                                     length: ShownPeriod.Length, expiry: Millis, shownBy snapshot: GoogleFact.Snapshot,
                                     after previous: Period?) -> [Period] {
        var orders: [Period] = []
        var start = start
        for index in first..<shownIndex {
            guard let end = length.back(shownIndex - index, from: expiry), end > start else { return [] }
            orders.append(filled(base: base, index: index, start: start, end: end, shownBy: snapshot, after: previous))
            start = end
        }
        return orders
    }

    /// Order `index` of the numbering `base`, which no resource showed, filled in over `start..<end`: the product,
    /// price and currency `snapshot` (the resource that proves it) states for the subscription, its recurring
    /// price (`previous`'s product and currency where it states none), unpriced when `snapshot` shows a trial or
    /// an offer's price (an earlier order may have cost less).
    private static func filled(base: String, index: Int64, start: Millis, end: Millis, shownBy snapshot: GoogleFact.Snapshot,
                               after previous: Period?) -> Period {
        let offer = snapshot.introductory || snapshot.offer
        var order = Period(id: GoogleOrderId.id(base: base, index: index), productId: snapshot.productId ?? previous?.productId ?? "",
                           start: start, end: end, isIntroductory: offer,
                           priceMicros: snapshot.trial || offer ? nil : snapshot.priceMicros,
                           currency: snapshot.currency ?? previous?.currency)
        order.isFilledIn = true
        return order
    }

    /// The index of the first of the orders at the end of `periods` that only a notice announced (`notified`:
    /// ``announcedRenewal(after:at:productId:facts:billedFrom:recoveredAt:keepsBillingDate:)``); `nil` when the last
    /// order is none of them. (Orders a `..N` number proves are never among them.)
    static func trailingAnnounced(_ periods: [Period], notified: Set<String>) -> Int? {
        guard let last = periods.last, notified.contains(last.id) else { return nil }
        var first = periods.count - 1
        while first > 0, notified.contains(periods[first - 1].id) { first -= 1 }
        return first
    }

    /// The orders between `previous` and `order` that no resource showed: their `..N` numbers prove they were
    /// charged (fetches missed them while RTDNs or nothing came). Back to back, one billing period each, ending
    /// one period before the shown order's expiry, the first from `previous`'s end; the product, price and
    /// currency the shown order's resource states for the subscription (its recurring price), unpriced when the
    /// subscription was sold with an introductory price (an earlier order may have cost less) or that order is a
    /// trial or introductory. None when the orders are not of one numbering, none is missing, or the
    /// periods would not fit after `previous`.
    private static func missingOrders(after previous: Period, before order: String, expiry: Millis, facts: TokenFacts,
                                      shownBy snapshot: GoogleFact.Snapshot) -> [Period] {
        guard let (base, _) = GoogleOrderId.split(order), let (previousBase, _) = GoogleOrderId.split(previous.id),
              base == previousBase, let subscriptionStart = facts.start else { return [] }
        let first = GoogleOrderId.index(previous.id) + 1, shownIndex = GoogleOrderId.index(order)
        let count = shownIndex - first
        guard count > 0, count <= longestMissingRun,
              let length = ShownPeriod.billingPeriod(subscriptionStart: subscriptionStart, expiry: expiry, orderIndex: shownIndex)
        else { return [] }
        return ordersBefore(shownIndex, from: first, base: base, start: previous.end, length: length, expiry: expiry,
                            shownBy: snapshot, after: previous)
    }

    /// Whether `snapshot` proves its order paid or a free trial: a renewal (`..N`, never a trial), a stated
    /// payment state (v1 `paymentState`, v2 `offerPhase`) or an introductory price. A first order that shows none
    /// of these may have been an unconverted free trial: a v1 resource once expired (Google drops
    /// `paymentState`), or a v2 one fetched before January 2026, when Google added `offerPhase`. (v2's latest
    /// successful order is no proof for a first order: an unconverted trial's $0 order is one.)
    static func provesPayment(_ snapshot: GoogleFact.Snapshot) -> Bool {
        GoogleOrderId.index(snapshot.order) >= 1 || snapshot.trial || snapshot.introductory || snapshot.state.paymentState == 1
    }

    /// Whether the order `snapshot` shows is counted as paid without proof (``Period/isAssumedPaid``): it proves
    /// nothing (``provesPayment(_:)``), and the token does not continue another (`linkedPurchaseToken`), whose
    /// first order is a change of plan's, charged or prorated, not a new subscriber's free trial.
    static func assumesPayment(_ snapshot: GoogleFact.Snapshot, facts: TokenFacts) -> Bool {
        facts.linkedFrom.isEmpty && !provesPayment(snapshot)
    }

    /// The period of an order first seen over: an expired resource is all the archive holds of it (a backfill
    /// fetching final states, or fetches that missed the order while it ran). A renewal (`..N`, never a trial), a
    /// stated payment state or an introductory price proves it paid or a free trial. A first order showing none of
    /// these is paid, as metrics.md counts every period not shown as a trial, and as the same resource fetched
    /// before the expiry would count it; but an unconverted free trial looks the same once expired (Google drops
    /// `paymentState`), so it is marked ``Period/isAssumedPaid`` (``assumesPayment(_:facts:)``: not the first order
    /// of a token that continues another) and the report says how many. A pending payment
    /// or a deferred change not yet in effect is left out. (The caller leaves out the order shown after a billing
    /// issue or a system cancellation: the renewal never paid.) It ran to its expiry (or the fetch, if sooner),
    /// placed as
    /// ``place(_:expiry:shownAt:announced:after:facts:shownBy:notifiedFailure:)`` places a running one when it continued the
    /// previous order (with the orders missing in between), else one billing period before its expiry, never
    /// before the previous order's end. Returns the missing orders, then it.
    static func endedOrder(_ snapshot: GoogleFact.Snapshot, facts: TokenFacts, after previous: Period?,
                                   continuing: Bool) -> [Period] {
        guard let order = snapshot.order, let expiry = snapshot.expiry, let subscriptionStart = facts.start else { return [] }
        let index = GoogleOrderId.index(order)
        // A pending payment (0) or a deferred change not yet in effect (3) was never charged.
        guard snapshot.state.paymentState != 0, snapshot.state.paymentState != 3 else { return [] }
        let end = min(expiry, snapshot.at)
        var placed: (start: Millis, missing: [Period])
        if continuing || previous == nil {
            placed = place(order, expiry: expiry, shownAt: snapshot.at, announced: nil, after: previous, facts: facts,
                           shownBy: snapshot)
        } else {
            placed = (ShownPeriod.start(subscriptionStart: subscriptionStart, expiry: expiry, orderIndex: index), [])
        }
        if let previous { placed.start = max(placed.start, previous.end) }
        guard placed.start < end else { return [] }
        var ended = Period(id: order, productId: snapshot.productId ?? "", start: placed.start, end: end,
                           isTrial: snapshot.trial, isIntroductory: snapshot.introductory,
                           priceMicros: snapshot.priceMicros, currency: snapshot.currency)
        ended.isAssumedPaid = assumesPayment(snapshot, facts: facts)
        ended.isProration = snapshot.prorated
        return placed.missing + [ended]
    }
}
