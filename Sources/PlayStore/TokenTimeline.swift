import Facts

/// The orders (periods) and billing-issue episodes of one purchase token, rebuilt by replaying its notifications
/// and resources in time order (``TokenReplay``), following docs/DESIGN.md "Google":
///
/// - A period is an order id, registered by the first resource showing it paid (ACTIVE or CANCELED; EXPIRED, below).
///   Its end is the expiry shown while it is current and not in grace (later fetches win: a deferral moves it).
/// - Its start: the first order's `startTime`; a renewal's, the previous order's end (orders no resource showed in
///   between are filled in), or, with no order before it in the archive, one billing period before its expiry.
/// - Notified orders: a SUBSCRIPTION_RENEWED of a running subscription that no fetch follows is the next order,
///   filled in until a resource shows it
///   (``announcedRenewal(after:at:productId:facts:billedFrom:recoveredAt:keepsBillingDate:)``).
///   After a billing issue or a pause, the first RECOVERED / RENEWED notice since it began is the recovery or the
///   resume: it closes the episode and starts the order it announces, which anchors the orders a later resource
///   shows (``ordersResumed(at:after:before:expiry:shownBy:)``); without a length to give that order, the next
///   fetch's order starts at the notice. A system cancellation showing the renewal it could not charge proves the
///   orders before it paid; those no record showed are filled in, and the billing issue moves to the last one's
///   end (``renewalsBefore(declined:after:shownBy:facts:)``).
/// - Grace (IN_GRACE_PERIOD, v1 `paymentState` 0 with the expiry ahead) opens an episode at E = the last paid
///   order's end; the expiry it shows is G (a hold's fetch shows it too; a grace only its notice shows runs to its
///   outcome, at most 30 days). Account hold (ON_HOLD, `paymentState` 0 with the expiry passed)
///   is the retry phase (G = E when no grace came first). A new paid order recovers the episode at T; EXPIRED,
///   REVOKED, or a non-user CANCELED in hold loses it, never later than E + ``BillingEpisode/longestRetry`` (a
///   grace period of at most 30 days, then an account hold of at most 30); an episode the archive shows no
///   outcome of is lost then (`metrics.md`: "where the archive never shows how a retry phase ended").
/// - PAUSED ends the current order with `.paused`; the order that resumes it starts a new period.
/// - A deferred upgrade or downgrade (v1 `paymentState` 3) grants nothing until a resource shows its order paid:
///   that order starts then (or when announced), not at the token's `startTime`.
/// - EXPIRED showing an order never seen running registers that order unless its payment was pending or never
///   made (``endedOrder(_:facts:after:continuing:)``), and its `cancelReason` says why the order ended when nothing
///   before the end did (1, a billing problem, is involuntary; with a price increase pending, a declined one).
struct TokenTimeline {
    /// The orders in order of charge, none empty, each with why access stopped at its end.
    let periods: [Period]
    /// The billing-issue episodes, in the order the replay closed them.
    let episodes: [BillingEpisode]

    init(_ facts: TokenFacts) {
        var replay = TokenReplay(facts)
        replay.run()
        var periods = replay.periods.filter { $0.start < $0.end }
        TokenTimeline.priceIntroductoryCycles(&periods, facts: facts)
        let signals = TokenTimeline.autoRenewSignals(facts)
        for i in periods.indices {
            let stated = replay.statedEnds[periods[i].id].flatMap { $0.end == periods[i].end ? $0.reason : nil }
            periods[i].endReason = TokenTimeline.endReason(of: periods[i], paused: replay.pausedOrders.contains(periods[i].id),
                                                           episodes: replay.episodes, signals: signals, statedEnd: stated)
        }
        self.periods = periods
        self.episodes = replay.episodes
    }

    /// A v1 introductory price is charged for `introductoryPriceCycles` billing periods, and a free trial is none:
    /// when a resource showed the token's first order (`GPA.x`) as a free trial, the cycles are orders `..0` to
    /// `..<cycles - 1>` (positions 1 to `cycles`), not 0 to `cycles - 1` as each resource alone reads them. (The
    /// times cannot tell: a trial may last a billing period, and a pause makes the first order look short.)
    /// Orders filled in or shown in a v2 introductory phase (no resource stated their price) are priced the same
    /// way by their position: the stated cycles and price, the order's number (with no trial shown, positions 0 to
    /// `cycles - 1`).
    private static func priceIntroductoryCycles(_ periods: inout [Period], facts: TokenFacts) {
        guard let offer = facts.snapshots.lazy.compactMap(\.state.introductoryOffer).first, offer.cycles >= 1 else { return }
        let afterTrial = facts.snapshots.contains { $0.trial && $0.order != nil && GoogleOrderId.index($0.order) == 0 }
        let first: Int64 = afterTrial ? 1 : 0
        for index in periods.indices where !periods[index].isTrial {
            // Unpriced: filled in, or shown in a v2 introductory phase (which states no price).
            let unpriced = periods[index].priceMicros == nil && (periods[index].isFilledIn || periods[index].isIntroductory)
            guard unpriced || (afterTrial && periods[index].priceMicros != nil) else { continue }
            let position = GoogleOrderId.index(periods[index].id)
            guard position >= first, position - first < offer.cycles else { continue }
            periods[index].isIntroductory = true
            periods[index].priceMicros = offer.micros
        }
    }

    /// The cancellation reason in force at `t`: the one stated with that time, else the first fetched at or
    /// after it (a CANCELED notification is followed by a fetch showing the reason), else the latest a resource
    /// logged without a fetch time states of an order still running at `t` (a backfill: its time is only a lower
    /// bound, often before `t`); `nil` when nothing says.
    static func cancelReason(after t: Millis, in facts: TokenFacts) -> Int? {
        if let stated = facts.cancels.first(where: { $0.at == t }) { return stated.reason }
        var low = 0, high = facts.snapshots.count
        while low < high {
            let mid = (low + high) / 2
            if facts.snapshots[mid].at < t { low = mid + 1 } else { high = mid }
        }
        return facts.snapshots[low...].first { $0.state.cancelReason != nil }?.state.cancelReason
            ?? facts.snapshots[..<low].last { $0.inferred && ($0.expiry ?? .max) > t && $0.state.cancelReason != nil }?.state.cancelReason
    }

    /// A statement about auto-renewal: a cancellation (with its reason when known) or its undoing (RESTARTED,
    /// a fetch showing the subscription active).
    private struct AutoRenewSignal {
        var at: Millis
        var cancelled: Bool
        var reason: Int?
    }

    /// Every auto-renewal statement of the token in time order; at equal times a fetched resource is the
    /// last word, after the notification and the stated cancellation time.
    private static func autoRenewSignals(_ facts: TokenFacts) -> [AutoRenewSignal] {
        var ranked: [(rank: Int, signal: AutoRenewSignal)] = []
        for event in facts.events {
            switch event.type.flatMap(GoogleNotificationType.init(rawValue:)) {
            case .canceled?: ranked.append((0, AutoRenewSignal(at: event.at, cancelled: true, reason: cancelReason(after: event.at, in: facts))))
            case .restarted?: ranked.append((0, AutoRenewSignal(at: event.at, cancelled: false)))
            default: break
            }
        }
        for cancel in facts.cancels { ranked.append((1, AutoRenewSignal(at: cancel.at, cancelled: true, reason: cancel.reason))) }
        // A snapshot logged without a fetch time says nothing about when auto-renewal was on or off.
        for snapshot in facts.snapshots where !snapshot.inferred {
            switch snapshot.state.state {
            case GoogleSubscriptionState.active:
                ranked.append((2, AutoRenewSignal(at: snapshot.at, cancelled: false)))
            case GoogleSubscriptionState.canceled:
                ranked.append((2, AutoRenewSignal(at: snapshot.at, cancelled: true, reason: snapshot.state.cancelReason)))
            default: break
            }
        }
        // Each group is already in time order; the index keeps equal keys in that deterministic order.
        return ranked.enumerated()
            .sorted { ($0.element.signal.at, $0.element.rank, $0.offset) < ($1.element.signal.at, $1.element.rank, $1.offset) }
            .map(\.element.signal)
    }

    /// Why access stopped at the period's end, were nothing to continue it: a pause, a failed renewal, else
    /// the last word on auto-renewal before the end (a cancellation by its reason; RESTARTED or a fetch showing
    /// the subscription active undoes it), else the `cancelReason` a resource fetched after the end states for
    /// the order (`statedEnd`).
    private static func endReason(of period: Period, paused: Bool, episodes: [BillingEpisode],
                                  signals: [AutoRenewSignal], statedEnd: Int?) -> EndReason {
        if paused { return .paused }
        if episodes.contains(where: { $0.failedAt == period.end }) { return .billingIssue }
        var low = 0, high = signals.count
        while low < high {
            let mid = (low + high) / 2
            if signals[mid].at < period.end { low = mid + 1 } else { high = mid }
        }
        if low > 0, signals[low - 1].cancelled { return endReason(cancelReason: signals[low - 1].reason) }
        if let statedEnd { return endReason(cancelReason: statedEnd) }
        return .unknown
    }

    /// The end reason a v1 `cancelReason` (v2 `canceledStateContext`, mapped onto the same numbers) names:
    /// 0 the user (also when no reason is stated), 1 the system, for a billing problem, 2 a replacement by
    /// another subscription, 3 the developer; a system cancellation with a price increase pending is a declined
    /// price increase.
    private static func endReason(cancelReason: Int?) -> EndReason {
        switch cancelReason {
        case nil, 0?: return .voluntary
        case 1?: return .billingIssue
        case 2?: return .replaced
        case 3?: return .developerCancel
        case GoogleSubscriptionState.declinedPriceIncrease?: return .priceIncrease
        default: return .unknown
        }
    }
}
