import Facts

/// The replay behind ``TokenTimeline``: one purchase token's notifications and resources taken in time order
/// (a notification first at equal times: a resource is fetched after the notification that prompted it), each
/// moving the token's phase and registering the orders and billing-issue episodes it proves. The rules are the
/// ones ``TokenTimeline`` states; the order arithmetic (where an order no record showed begins and ends) is in
/// `TokenTimeline+OrderInference.swift`.
///
/// Invariants while it runs: `periods` is in order of charge, `orderIndex` maps each of their ids to its index,
/// and at most one episode is `open`.
struct TokenReplay {
    /// The orders rebuilt so far, in order of charge (empty ones are dropped by ``TokenTimeline``).
    private(set) var periods: [Period] = []
    /// The billing-issue episodes, closed; after ``run()`` with their grace ends and losses final.
    private(set) var episodes: [BillingEpisode] = []
    /// Orders a pause ended.
    private(set) var pausedOrders: Set<String> = []
    /// The `cancelReason` an expired resource states for an order ending at `end`.
    private(set) var statedEnds: [String: (end: Millis, reason: Int)] = [:]

    /// `deferred`: a v1 resource showed `paymentState` 3 before any order, a deferred upgrade or downgrade waiting
    /// for the old subscription to end.
    private enum Phase { case none, active, grace, hold, paused, expired, deferred }

    private struct OpenEpisode {
        var failedAt: Millis
        var graceEnd: Millis?
    }

    private let facts: TokenFacts
    private var orderIndex: [String: Int] = [:]
    private var phase = Phase.none
    /// When `phase` began (ms UTC).
    private var phaseSince: Millis = .min
    private var open: OpenEpisode?
    /// The latest RENEWED / RECOVERED notice that counted (ms UTC).
    private var lastAnnouncement: Millis?
    /// The latest time a record showed the subscription in grace, on hold or paused (ms UTC): a recovery or resume
    /// came after it.
    private var lastShownOut: Millis = .min
    /// Orders only a notice announced (a renewal, a recovery or a resume), which a resource may replace
    /// (``TokenTimeline/trailingAnnounced(_:notified:)``); those a recovery or resume notice announced start at the
    /// notice and anchor the ones a later resource shows. (Orders a `..N` number proves stay.)
    private var notifiedOrders: Set<String> = []
    private var anchoredOrders: Set<String> = []
    /// Where the billing period of an order recovered in grace began: the failed renewal E, whose date it kept
    /// (the order itself starts at the recovery).
    private var billedFrom: [String: Millis] = [:]
    /// The episodes whose grace only a notice showed: their grace end is worked out once the replay is over.
    private var notifiedGrace: Set<Int> = []
    /// A grace or hold notice that came before any order was known (the purchase's fetch missing): when
    /// (E, the grace notice) and where the hold began, for the orders a later resource proves.
    private var issueBeforeOrders: (at: Millis, holdAt: Millis?)?

    init(_ facts: TokenFacts) {
        self.facts = facts
    }

    /// Replays every notification and resource of the token, then settles what only the whole archive can
    /// tell: the end of a grace only its notice showed, and the latest a loss can come.
    mutating func run() {
        var snapshotIndex = 0
        var eventIndex = 0
        while snapshotIndex < facts.snapshots.count || eventIndex < facts.events.count {
            // Notifications first at equal times: a resource is fetched after the notification that prompted it.
            if eventIndex < facts.events.count,
               snapshotIndex == facts.snapshots.count || facts.events[eventIndex].at <= facts.snapshots[snapshotIndex].at {
                apply(facts.events[eventIndex])
                eventIndex += 1
            } else {
                apply(facts.snapshots[snapshotIndex])
                snapshotIndex += 1
            }
        }
        if open != nil { closeEpisode(nil) }
        explainUnseenGaps()
        settleEpisodes()
    }

    /// Two orders of the token more than a day apart with no record in between (polls that missed what came
    /// between): on one token access stops and resumes only for a pause or an account hold. A pause a resource
    /// showed scheduled past the first order's end (`autoResumeTime`) ended it, and so did one of a length Google
    /// offers (1 to 3 weeks, 1 to 3 months, to the hour: it resumes at the paused order's end plus that); else the
    /// renewal failed at its end and was recovered from hold when the second began (no grace: none was seen), if
    /// within Google's longest retry.
    private mutating func explainUnseenGaps() {
        let day: Millis = 86_400_000, hour: Millis = 3_600_000
        for (previous, next) in zip(periods, periods.dropFirst()) where next.start - previous.end > day {
            guard !pausedOrders.contains(previous.id), !episodes.contains(where: { $0.failedAt == previous.end }),
                  !facts.snapshots.contains(where: { $0.at >= previous.end && $0.at < next.start }),
                  !facts.events.contains(where: { $0.at >= previous.end && $0.at < next.start }) else { continue }
            let pauseEnds = [7, 14, 21].map { previous.end + $0 * day }
                + [1, 2, 3].compactMap { Timestamp.addingMonths($0, to: previous.end) }
            if facts.pauses.contains(where: { $0.at <= previous.end && $0.resumeAt > previous.end })
                || pauseEnds.contains(where: { abs($0 - next.start) <= hour }) {
                pausedOrders.insert(previous.id)
            } else if next.start <= BillingEpisode.latestLoss(failedAt: previous.end) {
                episodes.append(BillingEpisode(failedAt: previous.end, graceEnd: previous.end,
                                               outcome: .recovered(at: next.start)))
            }
        }
    }

    // MARK: Notifications

    private mutating func apply(_ event: TokenFacts.Event) {
        let t = event.at
        let type = event.type.flatMap(GoogleNotificationType.init(rawValue:))
        if type == .inGracePeriod || type == .onHold || type == .paused { lastShownOut = max(lastShownOut, t) }
        switch type {
        case .renewed? where phase == .active && open == nil:
            lastAnnouncement = t
            // A renewal no fetch has shown yet: the order it announces, until a resource shows it.
            if let last = periods.last,
               let announced = TokenTimeline.announcedRenewal(after: last, at: t, productId: event.productId, facts: facts,
                                                              billedFrom: billedFrom[last.id]),
               orderIndex[announced.id] == nil {
                register(announced)
                notifiedOrders.insert(announced.id)
            }
        case .recovered?, .renewed?:
            // In grace, hold or a pause the first notice since the phase began is the recovery or the resume: the
            // order it announces starts there, and anchors those after it
            // (``TokenTimeline/ordersResumed(at:after:before:expiry:shownBy:)``) until a resource shows them.
            // (Without a length to give that order, the next fetch's order starts there.)
            let first = (lastAnnouncement ?? .min) < phaseSince
            if first, [Phase.grace, .hold, .paused].contains(phase), let last = periods.last,
               let recovered = TokenTimeline.announcedRenewal(after: last, at: t, productId: event.productId, facts: facts,
                                                              recoveredAt: t, keepsBillingDate: phase == .grace),
               orderIndex[recovered.id] == nil {
                if phase != .paused { closeEpisode(.recovered(at: t)) }
                notifiedOrders.insert(recovered.id)
                anchoredOrders.insert(recovered.id)
                if phase == .grace { billedFrom[recovered.id] = last.end }
                register(recovered)
                enter(.active, at: t)
            }
            if phase == .active || phase == .none || first { lastAnnouncement = t }
        case .inGracePeriod?:
            fillRenewalBeforeFailure(at: t)
            if openEpisode(at: t) {
                enter(.grace, at: t)
            } else if periods.isEmpty, phase == .none, issueBeforeOrders == nil {
                issueBeforeOrders = (t, nil)
            }
        case .onHold?:
            if open == nil, periods.isEmpty, phase == .none {
                issueBeforeOrders = issueBeforeOrders.map { ($0.at, $0.holdAt ?? t) } ?? (t, t)
            }
            fillRenewalBeforeFailure(at: t)
            if open == nil, !openEpisode(at: t) { return }
            if phase == .grace, open?.graceEnd == nil { open?.graceEnd = t }
            enter(.hold, at: t)
        case .paused?:
            if phase == .active, let last = periods.last { pausedOrders.insert(last.id) }
            if open == nil { enter(.paused, at: t) }
        case .expired?, .revoked?:
            closeEpisode(.lost(at: t))
            enter(.expired, at: t)
        case .canceled?:
            if phase == .hold, TokenTimeline.cancelReason(after: t, in: facts) != 0 {
                closeEpisode(.lost(at: t))
                enter(.expired, at: t)
            }
        default:
            break
        }
    }

    // MARK: Resources

    private mutating func apply(_ snapshot: GoogleFact.Snapshot) {
        if [GoogleSubscriptionState.inGracePeriod, GoogleSubscriptionState.onHold, GoogleSubscriptionState.paused]
            .contains(snapshot.state.state) {
            lastShownOut = max(lastShownOut, snapshot.at)
        }
        let knownIndex = snapshot.order.flatMap { orderIndex[$0] }
        let declined = TokenTimeline.showsDeclinedOrder(snapshot) && knownIndex == nil
        if snapshot.state.state == GoogleSubscriptionState.expired, let i = knownIndex, notifiedOrders.contains(periods[i].id) {
            confirmAnnounced(at: i, by: snapshot)
        }
        let resumedAt = withdrawAnnounced(shownBy: snapshot, knownIndex: knownIndex, declined: declined)
        switch snapshot.state.state {
        case GoogleSubscriptionState.active, GoogleSubscriptionState.canceled:
            registerRunning(snapshot, resumedAt: resumedAt)
        case GoogleSubscriptionState.inGracePeriod:
            guard openEpisode(at: snapshot.at) else { return }
            if let expiry = snapshot.expiry, phase != .hold { open?.graceEnd = expiry }
            if phase != .hold, phase != .grace { enter(.grace, at: snapshot.at) }
        case GoogleSubscriptionState.onHold:
            hold(shownBy: snapshot)
        case GoogleSubscriptionState.paused:
            pause(shownBy: snapshot)
        case GoogleSubscriptionState.expired:
            expire(shownBy: snapshot, declined: declined)
        case GoogleSubscriptionState.pending where snapshot.state.paymentState == 3:
            // Its first order starts when the change takes effect, not at the token's `startTime`.
            if phase == .none { enter(.deferred, at: snapshot.at) }
        default:
            // PENDING, UNSPECIFIED, PENDING_PURCHASE_CANCELED and states unknown to us change nothing.
            return
        }
    }

    /// An expired resource showing order `i`, which only a notice announced, confirms it: the order was paid, so it
    /// is no declined renewal. It takes the price the resource states (and its end, unless the resource shows a
    /// billing issue, whose expiry is the grace's end); the orders announced after it give way, the ones before it
    /// stay.
    private mutating func confirmAnnounced(at i: Int, by snapshot: GoogleFact.Snapshot) {
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

    /// Orders only a renewal notification announced give way to a resource showing an order, running or ended,
    /// that is new or one of them: it is registered as any other (`place` fills in again those before it, at the
    /// price its resource states). A fetch of an older order leaves them.
    /// A resource showing the renewal the system could not charge (`declined`) proves the orders before it paid:
    /// only those announced from it on give way.
    /// The orders before the last one a recovery or resume announced stay: a resource showing it or a later one is
    /// placed from its notice, with those in between. Returns that notice's time (the anchor's start), if any.
    private mutating func withdrawAnnounced(shownBy snapshot: GoogleFact.Snapshot, knownIndex: Int?, declined: Bool) -> Millis? {
        guard open == nil, !(knownIndex != nil && snapshot.state.state == GoogleSubscriptionState.expired),
              var firstAnnounced = TokenTimeline.trailingAnnounced(periods, notified: notifiedOrders),
              [GoogleSubscriptionState.active, GoogleSubscriptionState.canceled, GoogleSubscriptionState.expired].contains(snapshot.state.state),
              (snapshot.order.flatMap { orderIndex[$0] } ?? firstAnnounced) >= firstAnnounced else { return nil }
        var resumedAt: Millis?
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
        return resumedAt
    }

    /// A resource showing a running order (ACTIVE, or CANCELED with access left): a later fetch of the current
    /// order updates it; a new one is registered, with the orders before it no record showed, and recovers an
    /// open billing issue. `resumedAt`: where a recovery or resume notice anchored the orders up to it.
    private mutating func registerRunning(_ snapshot: GoogleFact.Snapshot, resumedAt: Millis?) {
        let t = snapshot.at
        guard let expiry = snapshot.expiry else { return }
        if snapshot.state.state == GoogleSubscriptionState.canceled, var episode = open {
            // Cancelled during grace or hold: v2 shows CANCELED with the grace-extended expiry. Not a payment; only
            // an expiry beyond the grace end shows a new paid order.
            if phase == .grace, episode.graceEnd == nil {
                episode.graceEnd = expiry
                open = episode
                return
            }
            if expiry <= max(episode.graceEnd ?? episode.failedAt, t) { return }
        }
        let order = snapshot.order ?? "\(facts.token)@\(expiry)"
        if let i = orderIndex[order] {
            update(i, shownBy: snapshot, expiry: expiry)
            return
        }
        let announced = lastAnnouncement.flatMap { $0 >= phaseSince ? $0 : nil }
        // When the subscription recovered or resumed: its notice; else, from account hold or a pause, the new
        // billing date the order shows (``TokenTimeline/restart(of:expiry:after:since:fetchedAt:)``); else this
        // fetch (a recovery in grace keeps the billing date, so the order shows only that it came before G).
        var recoveredAt = announced ?? t
        if announced == nil, let last = periods.last {
            if let episode = open, let graceEnd = episode.graceEnd, graceEnd < t, lastShownOut < graceEnd,
               TokenTimeline.keepsBillingDate(order, expiry: expiry, after: last, failedAt: episode.failedAt) {
                // Recovered in grace (a recovery from hold would have moved the billing date), shown only after the
                // grace ended: at the latest, just before its end.
                recoveredAt = max(lastShownOut, graceEnd - 1)
            } else if phase == .hold || phase == .paused || (phase == .grace && (open?.graceEnd ?? .max) < t),
                      let restart = TokenTimeline.restart(of: order, expiry: expiry, after: last,
                                                          since: max(phaseSince, lastShownOut), fetchedAt: t) {
                // (A grace that ended before this fetch with the billing date moved went on to account hold.)
                recoveredAt = restart
            }
        }
        if phase == .grace || phase == .hold { closeEpisode(.recovered(at: recoveredAt)) }
        // Where the orders up to the one shown began after a billing issue or a pause: the recovery or resume, or
        // the order a notice of it anchored.
        let resumedFrom: Millis? = switch phase {
        case .grace, .hold, .paused: recoveredAt
        case .active, .none: resumedAt
        case .expired, .deferred: nil
        }
        var start: Millis
        if let resumedFrom {
            // The orders charged from there up to the one shown, which no fetch showed.
            let resumed = periods.last.map {
                TokenTimeline.ordersResumed(at: resumedFrom, after: $0, before: order, expiry: expiry, shownBy: snapshot)
            } ?? []
            resumed.forEach { register($0) }
            start = resumed.last?.end ?? resumedFrom
        } else if phase == .expired || phase == .deferred {
            start = announced ?? t
        } else {
            let placed = TokenTimeline.place(order, expiry: expiry, shownAt: t, announced: announced,
                                             after: periods.last, facts: facts, shownBy: snapshot,
                                             notifiedFailure: periods.isEmpty ? issueBeforeOrders?.at : nil)
            placed.missing.forEach { register($0) }
            start = placed.start
            // The orders before this one, proven only now, end where a grace or hold notice said a renewal failed:
            // that billing issue, recovered by this order (from its notice, else this fetch).
            if let issue = issueBeforeOrders, let failedAt = placed.missing.last?.end, abs(failedAt - issue.at) <= 86_400_000 {
                let recoveredAt = max(announced ?? t, failedAt)
                if issue.holdAt == nil { notifiedGrace.insert(episodes.count) }
                episodes.append(BillingEpisode(failedAt: failedAt, graceEnd: max(issue.holdAt ?? failedAt, failedAt),
                                               outcome: .recovered(at: recoveredAt)))
                start = recoveredAt
            }
            issueBeforeOrders = nil
        }
        var shown = Period(id: order, productId: snapshot.productId ?? "", start: start, end: expiry,
                           isTrial: snapshot.trial, isIntroductory: snapshot.introductory,
                           priceMicros: snapshot.priceMicros, currency: snapshot.currency)
        shown.isProration = snapshot.prorated
        // A running v1 order always states its `paymentState`; a v2 one before 2026 had no offer phase.
        shown.isAssumedPaid = snapshot.state.version == 2 && !shown.isTrial && TokenTimeline.assumesPayment(snapshot, facts: facts)
        register(shown)
        enter(.active, at: t)
    }

    /// A later fetch of order `i`: its expiry may have moved (deferral). Never in grace here, and never an earlier
    /// order, whose end the next one's start already relies on. A deferral lengthens access, not the billing
    /// period: the end it was sold with stays `scheduledEnd`, as for an Apple extension.
    private mutating func update(_ i: Int, shownBy snapshot: GoogleFact.Snapshot, expiry: Millis) {
        guard phase == .active || phase == .none, i == periods.count - 1 else { return }
        if expiry > periods[i].end, periods[i].scheduledEnd == nil { periods[i].scheduledEnd = periods[i].end }
        periods[i].end = expiry
        // What one fetch shows of the order another may not (a v1 resource has no offer phase, a v2 one before
        // 2026 neither): a proof is never taken back. So the introductory price a v1 fetch showed the order at
        // stays when another fetch states only the recurring price (v2 without `offerPhase`), whichever came first.
        if snapshot.introductory, !periods[i].isIntroductory {
            // The price a fetch without the offer stated was the recurring one.
            periods[i].isIntroductory = true
            periods[i].priceMicros = snapshot.priceMicros
        } else if let price = snapshot.priceMicros, snapshot.introductory || !periods[i].isIntroductory {
            periods[i].priceMicros = price
        }
        if let currency = snapshot.currency { periods[i].currency = currency }
        if snapshot.prorated { periods[i].isProration = true }
        if snapshot.trial { periods[i].isTrial = true }
        if TokenTimeline.provesPayment(snapshot) { periods[i].isAssumedPaid = false }
    }

    /// An account-hold resource: the retry phase, opening the episode if no grace did.
    private mutating func hold(shownBy snapshot: GoogleFact.Snapshot) {
        if open == nil, !openEpisode(at: snapshot.at) { return }
        if var episode = open, episode.graceEnd == nil {
            // A held subscription shows the expiry its grace extended access to (E without grace): the grace end
            // even when no record of the grace itself was archived.
            if let expiry = snapshot.expiry, expiry >= episode.failedAt,
               phase == .grace || (expiry <= snapshot.at && expiry - episode.failedAt <= TokenTimeline.longestGrace) {
                episode.graceEnd = expiry
            } else {
                episode.graceEnd = episode.failedAt
            }
            open = episode
        }
        if phase != .hold { enter(.hold, at: snapshot.at) }
    }

    /// A paused resource: the order the pause ended, when no fetch showed it running, ran to the expiry shown.
    private mutating func pause(shownBy snapshot: GoogleFact.Snapshot) {
        if open == nil, let order = snapshot.order, orderIndex[order] == nil, [Phase.active, .none, .paused].contains(phase) {
            TokenTimeline.endedOrder(snapshot, facts: facts, after: periods.last, continuing: true).forEach { register($0) }
            if orderIndex[order] != nil { pausedOrders.insert(order) }
        }
        if phase == .active, let last = periods.last { pausedOrders.insert(last.id) }
        if open == nil, phase != .paused { enter(.paused, at: snapshot.at) }
    }

    /// An expired resource: registers the order it shows if no record did (unless it is the renewal never paid),
    /// the renewals a declined order's number proves, the `cancelReason` it states, and loses an open episode.
    private mutating func expire(shownBy snapshot: GoogleFact.Snapshot, declined: Bool) {
        if let order = snapshot.order, orderIndex[order] == nil, declined, let last = periods.last,
           case let paid = TokenTimeline.renewalsBefore(declined: order, after: last, shownBy: snapshot, facts: facts),
           let paidEnd = paid.last?.end {
            // The renewals the declined order's number proves paid, which no record showed: the billing issue (if
            // the archive shows one) began where the last of them ended, not where `last` did.
            paid.forEach { register($0) }
            if open?.failedAt == last.end, paidEnd <= snapshot.at { open?.failedAt = paidEnd }
            for index in episodes.indices where episodes[index].failedAt == last.end {
                let endedAt = switch episodes[index].outcome { case .recovered(let at), .lost(let at): at }
                guard paidEnd <= endedAt else { continue }
                episodes[index].failedAt = paidEnd
                episodes[index].graceEnd = max(episodes[index].graceEnd, paidEnd)
            }
        }
        if open == nil, let order = snapshot.order, orderIndex[order] == nil {
            if let reason = snapshot.state.cancelReason, declined {
                // The order shown is the renewal the system could not charge: the last paid one ended for it (a
                // billing problem, or a price increase the user did not accept).
                if let last = periods.last, statedEnds[last.id] == nil { statedEnds[last.id] = (last.end, reason) }
            } else if snapshot.paidOrder || !episodes.contains(where: { $0.failedAt == periods.last?.end }) {
                // (After a billing issue the order shown is the renewal that was never paid, unless the resource
                // names the latest paid order.)
                TokenTimeline.endedOrder(snapshot, facts: facts, after: periods.last,
                                         continuing: phase == .active || phase == .none).forEach { register($0) }
            }
        }
        if let order = snapshot.order, let expiry = snapshot.expiry, let reason = snapshot.state.cancelReason,
           statedEnds[order] == nil {
            statedEnds[order] = (expiry, reason)
        }
        if open != nil { closeEpisode(.lost(at: snapshot.at)) }
        if phase != .expired { enter(.expired, at: snapshot.at) }
    }

    // MARK: Phases, orders and episodes

    private mutating func enter(_ next: Phase, at t: Millis) {
        phase = next
        phaseSince = t
    }

    private mutating func register(_ period: Period) {
        orderIndex[period.id] = periods.count
        periods.append(period)
    }

    /// Ends the open episode with `outcome`, `nil` when the archive shows none. A loss is kept as the archive dates
    /// it (`Millis.max` for none) until the replay ends, since a later resource can still move the failure
    /// (``TokenTimeline/renewalsBefore(declined:after:shownBy:facts:)``); then it falls at
    /// ``BillingEpisode/latestLoss(failedAt:)`` at the latest, when Google has given up retrying whatever the
    /// archive shows later (``settleEpisodes()``).
    /// A grace period only a notification opened (no fetch or hold showed where it ended) was still running when
    /// the outcome came; its end is worked out after the replay (the failure may still move).
    private mutating func closeEpisode(_ outcome: BillingEpisode.Outcome?) {
        guard let episode = open else { return }
        if episode.graceEnd == nil, phase == .grace { notifiedGrace.insert(episodes.count) }
        episodes.append(BillingEpisode(failedAt: episode.failedAt, graceEnd: max(episode.graceEnd ?? episode.failedAt, episode.failedAt),
                                       outcome: outcome ?? .lost(at: .max)))
        open = nil
    }

    /// Opens an episode at the end of the last paid order, stated at `t`; `false` when there is nothing that could
    /// have failed to renew (a pending first purchase, a paused or expired subscription), or the last order runs on
    /// past `t` (a stale record of an issue a notice already said was over: a renewal fails at its order's end,
    /// give or take a day).
    private mutating func openEpisode(at t: Millis) -> Bool {
        guard open == nil else { return true }
        guard phase == .active || phase == .none, let last = periods.last, last.end <= t + 86_400_000 else { return false }
        open = OpenEpisode(failedAt: last.end, graceEnd: nil)
        return true
    }

    /// A renewal a RENEWED notice announced after an order whose length says nothing of the plan's (a free trial,
    /// whose renewal is not filled in then): a failure notified at `t`, long after that order's end, ends it there
    /// (unpriced: the notice states no price).
    private mutating func fillRenewalBeforeFailure(at t: Millis) {
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
        register(renewal)
        notifiedOrders.insert(renewal.id)
    }

    /// After the replay: a grace only its notice showed ran until a loss that came while it ran (access ended
    /// then); a recovery happened inside it, and with no outcome it may still run: as long as Google's grace can,
    /// from E as it finally is. Every loss comes at ``BillingEpisode/latestLoss(failedAt:)`` at the latest.
    private mutating func settleEpisodes() {
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
    }
}
