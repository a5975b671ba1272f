import Facts

/// Replays the notifications and resources of one purchase token in time order and rebuilds its orders
/// (periods) and billing-issue episodes, following docs/DESIGN.md "Google":
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
///   order's end; the expiry it shows is G (a hold's fetch shows it too; a grace only its notice shows, see
///   `closeEpisode`). Account hold (ON_HOLD, `paymentState` 0 with the expiry passed)
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
    private(set) var periods: [Period] = []
    private(set) var episodes: [BillingEpisode] = []

    /// `deferred`: a v1 resource showed `paymentState` 3 before any order, a deferred upgrade or downgrade waiting
    /// for the old subscription to end.
    private enum Phase { case none, active, grace, hold, paused, expired, deferred }

    private struct OpenEpisode {
        var failedAt: Millis
        var graceEnd: Millis?
    }

    init(_ facts: TokenFacts) {
        var orderIndex: [String: Int] = [:]
        var phase = Phase.none
        var phaseSince: Millis = .min
        var open: OpenEpisode?
        var lastAnnouncement: Millis?
        var pausedOrders: Set<String> = []
        /// Orders only a notice announced (a renewal, a recovery or a resume), which a resource may replace
        /// (``trailingAnnounced(_:notified:)``); those a recovery or resume notice announced start at the notice and
        /// anchor the ones a later resource shows. (Orders a `..N` number proves stay.)
        var notifiedOrders: Set<String> = []
        var anchoredOrders: Set<String> = []
        /// Where the billing period of an order recovered in grace began: the failed renewal E, whose date it kept
        /// (the order itself starts at the recovery).
        var billedFrom: [String: Millis] = [:]
        /// The episodes whose grace only a notice showed: their grace end is worked out once the replay is over.
        var notifiedGrace: Set<Int> = []
        /// A grace or hold notice that came before any order was known (the purchase's fetch missing): when
        /// (E, the grace notice) and where the hold began, for the orders a later resource proves.
        var issueBeforeOrders: (at: Millis, holdAt: Millis?)?
        /// The `cancelReason` an expired resource states for an order ending at `end`.
        var statedEnds: [String: (end: Millis, reason: Int)] = [:]

        /// Ends the open episode with `outcome`, `nil` when the archive shows none. A loss is kept as the archive
        /// dates it (`Millis.max` for none) until the replay ends, since a later resource can still move the
        /// failure (``renewalsBefore(declined:after:shownBy:facts:)``); then it falls at
        /// ``BillingEpisode/latestLoss(failedAt:)`` at the latest, when Google has given up retrying whatever the
        /// archive shows later.
        /// A grace period only a notification opened (no fetch or hold showed where it ended) was still running
        /// when the outcome came; its end is worked out after the replay (the failure may still move).
        func closeEpisode(_ outcome: BillingEpisode.Outcome?) {
            guard let episode = open else { return }
            if episode.graceEnd == nil, phase == .grace { notifiedGrace.insert(episodes.count) }
            episodes.append(BillingEpisode(failedAt: episode.failedAt, graceEnd: max(episode.graceEnd ?? episode.failedAt, episode.failedAt),
                                           outcome: outcome ?? .lost(at: .max)))
            open = nil
        }
        /// Opens an episode at the end of the last paid order, stated at `t`; `false` when there is nothing that
        /// could have failed to renew (a pending first purchase, a paused or expired subscription), or the last
        /// order runs on past `t` (a stale record of an issue a notice already said was over: a renewal fails at
        /// its order's end, give or take a day).
        func openEpisode(at t: Millis) -> Bool {
            guard open == nil else { return true }
            guard phase == .active || phase == .none, let last = periods.last, last.end <= t + 86_400_000 else { return false }
            open = OpenEpisode(failedAt: last.end, graceEnd: nil)
            return true
        }

        /// A renewal a RENEWED notice announced after an order whose length says nothing of the plan's (a free
        /// trial, whose renewal is not filled in then): a failure notified at `t`, long after that order's end,
        /// ends it there (unpriced: the notice states no price).
        func fillRenewalBeforeFailure(at t: Millis) {
            let day: Millis = 86_400_000
            guard open == nil, phase == .active, let last = periods.last, last.end < t - day,
                  let renewed = facts.events.last(where: {
                      $0.type == GoogleNotificationType.renewed.rawValue && $0.at >= last.end - day && $0.at < t - day
                  }),
                  let (base, _) = GoogleOrderId.split(last.id), GoogleOrderId.index(last.id) < GoogleOrderId.largestRenewal
            else { return }
            var renewal = Period(id: GoogleOrderId.id(base: base, index: GoogleOrderId.index(last.id) + 1),
                                 productId: renewed.productId ?? last.productId, start: last.end, end: t, currency: last.currency)
            renewal.isFilledIn = true
            guard orderIndex[renewal.id] == nil else { return }
            orderIndex[renewal.id] = periods.count
            notifiedOrders.insert(renewal.id)
            periods.append(renewal)
        }

        var snapshotIndex = 0
        var eventIndex = 0
        while snapshotIndex < facts.snapshots.count || eventIndex < facts.events.count {
            // Notifications first at equal times: a resource is fetched after the notification that prompted it.
            let takeEvent = eventIndex < facts.events.count
                && (snapshotIndex == facts.snapshots.count || facts.events[eventIndex].at <= facts.snapshots[snapshotIndex].at)
            if takeEvent {
                let event = facts.events[eventIndex]
                eventIndex += 1
                let t = event.at
                switch event.type.flatMap(GoogleNotificationType.init(rawValue:)) {
                case .renewed? where phase == .active && open == nil:
                    lastAnnouncement = t
                    // A renewal no fetch has shown yet: the order it announces, until a resource shows it.
                    if let last = periods.last,
                       let announced = TokenTimeline.announcedRenewal(after: last, at: t, productId: event.productId, facts: facts,
                                                                      billedFrom: billedFrom[last.id]),
                       orderIndex[announced.id] == nil {
                        orderIndex[announced.id] = periods.count
                        notifiedOrders.insert(announced.id)
                        periods.append(announced)
                    }
                case .recovered?, .renewed?:
                    // In grace, hold or a pause the first notice since the phase began is the recovery or the
                    // resume: the order it announces starts there, and anchors those after it
                    // (``ordersResumed(at:after:before:expiry:shownBy:)``) until a resource shows them. (Without
                    // a length to give that order, the next fetch's order starts there.)
                    let first = (lastAnnouncement ?? .min) < phaseSince
                    if first, [Phase.grace, .hold, .paused].contains(phase), let last = periods.last,
                       let recovered = TokenTimeline.announcedRenewal(after: last, at: t, productId: event.productId, facts: facts,
                                                                      recoveredAt: t, keepsBillingDate: phase == .grace),
                       orderIndex[recovered.id] == nil {
                        if phase != .paused { closeEpisode(.recovered(at: t)) }
                        orderIndex[recovered.id] = periods.count
                        notifiedOrders.insert(recovered.id)
                        anchoredOrders.insert(recovered.id)
                        if phase == .grace { billedFrom[recovered.id] = last.end }
                        periods.append(recovered)
                        phase = .active
                        phaseSince = t
                    }
                    if phase == .active || phase == .none || first { lastAnnouncement = t }
                case .inGracePeriod?:
                    fillRenewalBeforeFailure(at: t)
                    if openEpisode(at: t) {
                        phase = .grace
                        phaseSince = t
                    } else if periods.isEmpty, phase == .none, issueBeforeOrders == nil {
                        issueBeforeOrders = (t, nil)
                    }
                case .onHold?:
                    if open == nil, periods.isEmpty, phase == .none {
                        issueBeforeOrders = issueBeforeOrders.map { ($0.at, $0.holdAt ?? t) } ?? (t, t)
                    }
                    fillRenewalBeforeFailure(at: t)
                    if open == nil, !openEpisode(at: t) { break }
                    if phase == .grace, open?.graceEnd == nil { open?.graceEnd = t }
                    phase = .hold
                    phaseSince = t
                case .paused?:
                    if phase == .active, let last = periods.last { pausedOrders.insert(last.id) }
                    if open == nil { phase = .paused; phaseSince = t }
                case .expired?:
                    closeEpisode(.lost(at: t))
                    phase = .expired
                    phaseSince = t
                case .revoked?:
                    closeEpisode(.lost(at: t))
                    phase = .expired
                    phaseSince = t
                case .canceled?:
                    if phase == .hold, TokenTimeline.cancelReason(after: t, in: facts) != 0 {
                        closeEpisode(.lost(at: t))
                        phase = .expired
                        phaseSince = t
                    }
                default:
                    break
                }
                continue
            }
            let snapshot = facts.snapshots[snapshotIndex]
            snapshotIndex += 1
            let t = snapshot.at
            // Orders only a renewal notification announced give way to a resource showing an order, running or
            // ended, that is new or one of them: it is registered as any other (`place` fills in again those
            // before it, at the price its resource states). A fetch of an older order leaves them.
            // A resource showing the renewal the system could not charge proves the orders before it paid: only
            // those announced from it on give way.
            // The orders before the last one a recovery or resume announced stay: a resource showing it or a later
            // one is placed from its notice (`resumedAt`), with those in between.
            // An expired resource showing an order already known (fetched, or announced by a notice) confirms it:
            // the order was paid, so it is no declined renewal. An announced one takes the price the resource states
            // (and its end, unless the resource shows a billing issue, whose expiry is the grace's end); the orders
            // announced after it give way, the ones before it stay.
            let knownIndex = snapshot.order.flatMap { orderIndex[$0] }
            let declined = TokenTimeline.showsDeclinedOrder(snapshot) && knownIndex == nil
            if snapshot.state.state == GoogleSubscriptionState.expired, let i = knownIndex, notifiedOrders.contains(periods[i].id) {
                notifiedOrders.remove(periods[i].id)
                periods[i].isFilledIn = false
                if let price = snapshot.priceMicros { periods[i].priceMicros = price }
                if let currency = snapshot.currency { periods[i].currency = currency }
                if let expiry = snapshot.expiry, expiry > periods[i].start, snapshot.state.cancelReason != 1,
                   snapshot.state.cancelReason != GoogleSubscriptionState.declinedPriceIncrease {
                    periods[i].end = min(expiry, snapshot.at)
                }
                while periods.count > i + 1, let later = periods.last, notifiedOrders.contains(later.id) {
                    orderIndex[later.id] = nil
                    notifiedOrders.remove(later.id)
                    periods.removeLast()
                }
            }
            var resumedAt: Millis?
            if open == nil, !(knownIndex != nil && snapshot.state.state == GoogleSubscriptionState.expired),
               var firstAnnounced = TokenTimeline.trailingAnnounced(periods, notified: notifiedOrders),
               [GoogleSubscriptionState.active, GoogleSubscriptionState.canceled, GoogleSubscriptionState.expired].contains(snapshot.state.state),
               (snapshot.order.flatMap { orderIndex[$0] } ?? firstAnnounced) >= firstAnnounced {
                if declined, let order = snapshot.order {
                    let shownIndex = GoogleOrderId.index(order)
                    while firstAnnounced < periods.count, GoogleOrderId.index(periods[firstAnnounced].id) < shownIndex,
                          GoogleOrderId.split(periods[firstAnnounced].id)?.base == GoogleOrderId.split(order)?.base {
                        firstAnnounced += 1
                    }
                } else if let anchor = periods.indices[firstAnnounced...].last(where: { anchoredOrders.contains(periods[$0].id) }) {
                    firstAnnounced = anchor
                    resumedAt = periods[anchor].start
                }
                for announced in periods[firstAnnounced...] { orderIndex[announced.id] = nil; notifiedOrders.remove(announced.id) }
                periods.removeSubrange(firstAnnounced...)
            }
            switch snapshot.state.state {
            case GoogleSubscriptionState.active, GoogleSubscriptionState.canceled:
                guard let expiry = snapshot.expiry else { continue }
                if snapshot.state.state == GoogleSubscriptionState.canceled, var episode = open {
                    // Cancelled during grace or hold: v2 shows CANCELED with the grace-extended expiry. Not a
                    // payment; only an expiry beyond the grace end shows a new paid order.
                    if phase == .grace, episode.graceEnd == nil {
                        episode.graceEnd = expiry
                        open = episode
                        continue
                    }
                    if expiry <= max(episode.graceEnd ?? episode.failedAt, t) { continue }
                }
                let order = snapshot.order ?? "\(facts.token)@\(expiry)"
                if let i = orderIndex[order] {
                    // A later fetch of the current order: its expiry may have moved (deferral). Never in grace
                    // here, and never an earlier order, whose end the next one's start already relies on. A
                    // deferral lengthens access, not the billing period: the end it was sold with stays
                    // `scheduledEnd`, as for an Apple extension.
                    if phase == .active || phase == .none, i == periods.count - 1 {
                        if expiry > periods[i].end, periods[i].scheduledEnd == nil { periods[i].scheduledEnd = periods[i].end }
                        periods[i].end = expiry
                        if let price = snapshot.priceMicros { periods[i].priceMicros = price }
                        if let currency = snapshot.currency { periods[i].currency = currency }
                        // What one fetch shows of the order another may not (a v1 resource has no offer phase, a v2
                        // one before 2026 neither): a proof is never taken back.
                        if snapshot.prorated { periods[i].isProration = true }
                        if snapshot.trial { periods[i].isTrial = true }
                        if TokenTimeline.provesPayment(snapshot) { periods[i].isAssumedPaid = false }
                    }
                    continue
                }
                let announced = lastAnnouncement.flatMap { $0 >= phaseSince ? $0 : nil }
                if phase == .grace || phase == .hold { closeEpisode(.recovered(at: announced ?? t)) }
                // Where the orders up to the one shown began after a billing issue or a pause: the recovery or
                // resume (its notice, else this fetch), or the order a notice of it anchored.
                let resumedFrom: Millis? = switch phase {
                case .grace, .hold, .paused: announced ?? t
                case .active, .none: resumedAt
                case .expired, .deferred: nil
                }
                var start: Millis
                if let resumedFrom {
                    // The orders charged from there up to the one shown, which no fetch showed.
                    let resumed = periods.last.map {
                        TokenTimeline.ordersResumed(at: resumedFrom, after: $0, before: order, expiry: expiry, shownBy: snapshot)
                    } ?? []
                    for renewal in resumed {
                        orderIndex[renewal.id] = periods.count
                        periods.append(renewal)
                    }
                    start = resumed.last?.end ?? resumedFrom
                } else if phase == .expired || phase == .deferred {
                    start = announced ?? t
                } else {
                    let placed = TokenTimeline.place(order, expiry: expiry, shownAt: t, announced: announced,
                                                     after: periods.last, facts: facts, shownBy: snapshot,
                                                     notifiedFailure: periods.isEmpty ? issueBeforeOrders?.at : nil)
                    for missing in placed.missing {
                        orderIndex[missing.id] = periods.count
                        periods.append(missing)
                    }
                    start = placed.start
                    // The orders before this one, proven only now, end where a grace or hold notice said a renewal
                    // failed: that billing issue, recovered by this order (from its notice, else this fetch).
                    if let issue = issueBeforeOrders, let failedAt = placed.missing.last?.end, abs(failedAt - issue.at) <= 86_400_000 {
                        let recoveredAt = max(announced ?? t, failedAt)
                        if issue.holdAt == nil { notifiedGrace.insert(episodes.count) }
                        episodes.append(BillingEpisode(failedAt: failedAt, graceEnd: max(issue.holdAt ?? failedAt, failedAt),
                                                       outcome: .recovered(at: recoveredAt)))
                        start = recoveredAt
                    }
                    issueBeforeOrders = nil
                }
                orderIndex[order] = periods.count
                var shown = Period(id: order, productId: snapshot.productId ?? "", start: start, end: expiry,
                                   isTrial: snapshot.trial, isIntroductory: snapshot.introductory,
                                   priceMicros: snapshot.priceMicros, currency: snapshot.currency)
                shown.isProration = snapshot.prorated
                // A running v1 order always states its `paymentState`; a v2 one before 2026 had no offer phase.
                shown.isAssumedPaid = snapshot.state.version == 2 && !shown.isTrial
                    && TokenTimeline.assumesPayment(snapshot, facts: facts)
                periods.append(shown)
                phase = .active
                phaseSince = t
            case GoogleSubscriptionState.inGracePeriod:
                guard openEpisode(at: t) else { continue }
                if let expiry = snapshot.expiry, phase != .hold { open?.graceEnd = expiry }
                if phase != .hold, phase != .grace { phase = .grace; phaseSince = t }
            case GoogleSubscriptionState.onHold:
                if open == nil, !openEpisode(at: t) { continue }
                if var episode = open, episode.graceEnd == nil {
                    // A held subscription shows the expiry its grace extended access to (E without grace): the
                    // grace end even when no record of the grace itself was archived.
                    if let expiry = snapshot.expiry, expiry >= episode.failedAt,
                       phase == .grace || (expiry <= t && expiry - episode.failedAt <= TokenTimeline.longestGrace) {
                        episode.graceEnd = expiry
                    } else {
                        episode.graceEnd = episode.failedAt
                    }
                    open = episode
                }
                if phase != .hold { phase = .hold; phaseSince = t }
            case GoogleSubscriptionState.paused:
                // The order the pause ended, when no fetch showed it running: it ran to the expiry shown.
                if open == nil, let order = snapshot.order, orderIndex[order] == nil, [Phase.active, .none, .paused].contains(phase) {
                    for ended in TokenTimeline.endedOrder(snapshot, facts: facts, after: periods.last, continuing: true) {
                        orderIndex[ended.id] = periods.count
                        periods.append(ended)
                    }
                    if orderIndex[order] != nil { pausedOrders.insert(order) }
                }
                if phase == .active, let last = periods.last { pausedOrders.insert(last.id) }
                if open == nil, phase != .paused { phase = .paused; phaseSince = t }
            case GoogleSubscriptionState.expired:
                if let order = snapshot.order, orderIndex[order] == nil, declined, let last = periods.last,
                   case let paid = TokenTimeline.renewalsBefore(declined: order, after: last, shownBy: snapshot, facts: facts),
                   let paidEnd = paid.last?.end {
                    // The renewals the declined order's number proves paid, which no record showed: the billing
                    // issue (if the archive shows one) began where the last of them ended, not where `last` did.
                    for renewal in paid {
                        orderIndex[renewal.id] = periods.count
                        periods.append(renewal)
                    }
                    if open?.failedAt == last.end, paidEnd <= t { open?.failedAt = paidEnd }
                    for index in episodes.indices where episodes[index].failedAt == last.end {
                        let endedAt = switch episodes[index].outcome { case .recovered(let at), .lost(let at): at }
                        guard paidEnd <= endedAt else { continue }
                        episodes[index].failedAt = paidEnd
                        episodes[index].graceEnd = max(episodes[index].graceEnd, paidEnd)
                    }
                }
                if open == nil, let order = snapshot.order, orderIndex[order] == nil {
                    if let reason = snapshot.state.cancelReason, declined {
                        // The order shown is the renewal the system could not charge: the last paid one ended
                        // for it (a billing problem, or a price increase the user did not accept).
                        if let last = periods.last, statedEnds[last.id] == nil { statedEnds[last.id] = (last.end, reason) }
                    } else if snapshot.paidOrder || !episodes.contains(where: { $0.failedAt == periods.last?.end }) {
                        // (After a billing issue the order shown is the renewal that was never paid, unless the
                        // resource names the latest paid order.)
                        for ended in TokenTimeline.endedOrder(snapshot, facts: facts, after: periods.last,
                                                              continuing: phase == .active || phase == .none) {
                            orderIndex[ended.id] = periods.count
                            periods.append(ended)
                        }
                    }
                }
                if let order = snapshot.order, let expiry = snapshot.expiry, let reason = snapshot.state.cancelReason,
                   statedEnds[order] == nil {
                    statedEnds[order] = (expiry, reason)
                }
                if open != nil { closeEpisode(.lost(at: t)) }
                if phase != .expired { phase = .expired; phaseSince = t }
            case GoogleSubscriptionState.pending where snapshot.state.paymentState == 3:
                // Its first order starts when the change takes effect, not at the token's `startTime`.
                if phase == .none { phase = .deferred; phaseSince = t }
            default:
                // PENDING, UNSPECIFIED, PENDING_PURCHASE_CANCELED and states unknown to us change nothing.
                continue
            }
        }
        if open != nil { closeEpisode(nil) }
        // A grace only its notice showed ran until a loss that came while it ran (access ended then); a recovery
        // happened inside it, and with no outcome it may still run: as long as Google's grace can, from E as it
        // finally is.
        for index in notifiedGrace {
            let longest = episodes[index].failedAt.addingReportingOverflow(TokenTimeline.longestGrace)
            let cap = longest.overflow ? Millis.max : longest.partialValue
            episodes[index].graceEnd = switch episodes[index].outcome {
            case .recovered: cap
            case .lost(let at): max(episodes[index].failedAt, min(at, cap))
            }
        }
        for index in episodes.indices {
            if case .lost(let at) = episodes[index].outcome {
                episodes[index].outcome = .lost(at: min(at, BillingEpisode.latestLoss(failedAt: episodes[index].failedAt)))
            }
        }
        periods.removeAll { $0.start >= $0.end }
        TokenTimeline.priceIntroductoryCycles(&periods, facts: facts)
        let signals = TokenTimeline.autoRenewSignals(facts)
        for i in periods.indices {
            periods[i].endReason = TokenTimeline.endReason(of: periods[i], paused: pausedOrders.contains(periods[i].id),
                                                           episodes: episodes, signals: signals,
                                                           statedEnd: statedEnds[periods[i].id].flatMap {
                                                               $0.end == periods[i].end ? $0.reason : nil
                                                           })
        }
    }

    /// A v1 introductory price is charged for `introductoryPriceCycles` billing periods, and a free trial is none:
    /// when a resource showed the token's first order (`GPA.x`) as a free trial, the cycles are orders `..0` to
    /// `..<cycles - 1>` (positions 1 to `cycles`), not 0 to `cycles - 1` as each resource alone reads them. (The
    /// times cannot tell: a trial may last a billing period, and a pause makes the first order look short.)
    /// Orders filled in (no resource stated their price) are priced the same way by their position: the stated
    /// cycles and price, the order's number (with no trial shown, positions 0 to `cycles - 1`).
    private static func priceIntroductoryCycles(_ periods: inout [Period], facts: TokenFacts) {
        guard let offer = facts.snapshots.lazy.compactMap(\.state.introductoryOffer).first, offer.cycles >= 1 else { return }
        let afterTrial = facts.snapshots.contains { $0.trial && $0.order != nil && GoogleOrderId.index($0.order) == 0 }
        let first: Int64 = afterTrial ? 1 : 0
        for index in periods.indices where !periods[index].isTrial {
            let filled = periods[index].isFilledIn && periods[index].priceMicros == nil
            guard filled || (afterTrial && periods[index].priceMicros != nil) else { continue }
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

    /// The longest grace period Google offers (ms): 30 days, the most a base plan can set.
    private static let longestGrace: Millis = 30 * 86_400_000

    /// The longest run of orders no resource showed that is filled in between two that were (a hostile `..N`
    /// must not make millions of periods).
    private static let longestMissingRun: Int64 = 1_000

    /// Where an order first shown while the subscription was active (or before anything was known) began, and the
    /// orders before it that no resource showed (``missingOrders(after:before:expiry:facts:shownBy:)``):
    /// - after a known order, where the orders between them end (at that order's end when none are missing);
    /// - the first order (`GPA.x`) at the subscription's `startTime`;
    /// - a renewal whose predecessors no fetch showed, when the archive holds the purchase's notice: after them,
    ///   filled in from `startTime` (``ordersBefore(_:from:base:start:length:expiry:shownBy:after:)``);
    /// - a renewal whose predecessors the archive never showed (it begins mid-life, or a backfill logged only
    ///   current states) one billing period before its expiry (``ShownPeriod``), not at the fetch, which may come
    ///   any time while it runs; or at the RENEWED / RECOVERED notification that announced it, when that is no
    ///   more than three days earlier.
    private static func place(_ order: String, expiry: Millis, shownAt t: Millis, announced: Millis?,
                              after previous: Period?, facts: TokenFacts, shownBy snapshot: GoogleFact.Snapshot,
                              notifiedFailure: Millis? = nil) -> (start: Millis, missing: [Period]) {
        if let previous {
            let missing = missingOrders(after: previous, before: order, expiry: expiry, facts: facts, shownBy: snapshot)
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
            } else if let length = ShownPeriod.billingPeriod(subscriptionStart: subscriptionStart, expiry: expiry, orderIndex: index) {
                // Else back to back up to the order shown, when they reach the notice that announced it (a gap no
                // notice explains, as a hold's, leaves them out).
                let placed = ordersBefore(index, from: 0, base: base, start: subscriptionStart, length: length, expiry: expiry,
                                          shownBy: snapshot, after: nil)
                if let end = placed.last?.end, announced.map({ $0 <= end + day }) ?? true { missing = placed }
            }
            // The first may have been a free trial, which no resource says: counted as paid, and said
            // (``Period/isAssumedPaid``), unless the token continues another.
            if !missing.isEmpty { missing[0].isAssumedPaid = facts.linkedFrom.isEmpty }
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
    private static func announcedRenewal(after last: Period, at t: Millis, productId: String?, facts: TokenFacts,
                                         billedFrom: Millis? = nil, recoveredAt: Millis? = nil,
                                         keepsBillingDate: Bool = true) -> Period? {
        let day: Millis = 86_400_000
        guard !last.isTrial, !last.isIntroductory, !last.isProration, !last.isAssumedPaid, last.end - day <= t,
              let (base, _) = GoogleOrderId.split(last.id) else { return nil }
        let index = GoogleOrderId.index(last.id)
        let soldEnd = last.scheduledEnd ?? last.end
        guard index < GoogleOrderId.largestRenewal,
              let length = ShownPeriod.candidates.first(where: { candidate in
                  candidate.back(1, from: soldEnd).map { abs($0 - (billedFrom ?? last.start)) <= day } ?? false
              }),
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
    private static func showsDeclinedOrder(_ snapshot: GoogleFact.Snapshot) -> Bool {
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
    private static func renewalsBefore(declined order: String, after last: Period, shownBy snapshot: GoogleFact.Snapshot,
                                       facts: TokenFacts) -> [Period] {
        let day: Millis = 86_400_000
        guard let (base, _) = GoogleOrderId.split(order), let (lastBase, _) = GoogleOrderId.split(last.id), base == lastBase,
              !last.isProration else { return [] }
        let first = GoogleOrderId.index(last.id) + 1, declinedIndex = GoogleOrderId.index(order)
        guard declinedIndex - first > 0, declinedIndex - first <= longestMissingRun else { return [] }
        let soldEnd = last.scheduledEnd ?? last.end
        let length: ShownPeriod.Length?
        if !last.isTrial, !last.isIntroductory {
            length = ShownPeriod.candidates.first { $0.back(1, from: soldEnd).map { abs($0 - last.start) <= day } ?? false }
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

    /// The orders from a recovery or a resume at `resumedAt` up to `order`, the first one a resource shows after
    /// it, that no resource showed: `order`'s number proves them charged after `last`, the last order before the
    /// billing issue or the pause. Back to back, one billing period each, ending one period before `order`'s
    /// expiry, the first from `resumedAt`. The period is the first of ``ShownPeriod/candidates`` whose orders,
    /// counted back from that expiry, begin where the first could: at the recovery (a recovery from account
    /// hold or a resume starts a new billing date, ±1 day) or after `last`'s end (one in grace keeps it). Priced as
    /// ``missingOrders(after:before:expiry:facts:shownBy:)`` prices them. None when the orders are not of one
    /// numbering, none is missing, or no period fits.
    private static func ordersResumed(at resumedAt: Millis, after last: Period, before order: String, expiry: Millis,
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
    private static func trailingAnnounced(_ periods: [Period], notified: Set<String>) -> Int? {
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
    private static func endedOrder(_ snapshot: GoogleFact.Snapshot, facts: TokenFacts, after previous: Period?,
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
