import Facts

/// Rebuilds one Apple subscription (one `original_transaction_id`) from its facts: the ledger's rows, read back
/// as ``AppleFact``s by ``AppleFactCodec`` (rows it cannot read are skipped).
///
/// A pure function of the fact *set*: the facts are sorted on every column first, so neither the order the
/// ledger returns them in nor the order records arrived in can change the result. When statements disagree,
/// the later `observedAt` wins.
///
/// Rules (docs/DESIGN.md "Apple"):
/// - a period per `transaction_id`, merged field by field over all its facts, later statement wins;
///   `.upgraded` sticks once stated; an expiry extended later keeps the first as ``Period/scheduledEnd``;
///   transactions sharing a `web_order_line_item_id` are one period (a restore
///   re-issues a subscription's transactions under new ids), named by the id Apple issued first;
/// - an upgraded period ends at its cancellation (the latest stated `upgrade`) with ``EndReason/replaced``; it is
///   revoked only by a refund at another time than that cancellation (a REFUND notification); a period that
///   another product's period starts inside is ended there the same way (V2 upgrades name only the new
///   transaction; a period an upgrade ended interrupts nothing); either keeps the end it was sold with as
///   ``Period/scheduledEnd``; an upgraded period reaches a next period starting within a day after its
///   cancellation;
/// - a revocation sticks unless a REFUND_REVERSED for the transaction is observed at or after it, and then stands
///   until that time (``Period/revocationReversedAt``);
/// - an episode per failed renewal at E = the latest period end at or before the failure notice; G = the latest
///   stated grace end, else E; recovered at T = the start of the first period starting at or after E and before
///   L; otherwise lost at L = the first V2 EXPIRED BILLING_RETRY at or after E, at most E + 60 days (Apple's
///   longest billing retry). `Metrics` turns outcomes after the as-of time into `open`;
/// - a period nothing continues ends `billingIssue` when an episode starts at its end, `voluntary` when the last
///   auto-renew state at or before its end is off, else for the reason its expiry states, else `unknown`.
public struct AppleHistoryBuilder: Sendable {

    /// A builder; it holds no state, so one serves every subscription.
    public init() {}

    /// The history of the subscription `id` (its `original_transaction_id`) from all its facts, in any order:
    /// the facts are sorted first, so the result is a pure function of the set (see docs/DESIGN.md, "Apple").
    public func history(id: String, facts rows: [Fact]) -> SubscriptionHistory {
        var rows = rows.filter { $0.platform == .apple }
        rows.sortInPlace(by: Self.precedes)
        let facts = Self.namedByPurchaseEvent(
            rows.compactMap { row in AppleFactCodec.decode(row).map { Statement(observedAt: row.observedAt, fact: $0) } })
        let cancellations = Self.cancellations(facts)
        let upgrades = Self.upgrades(facts)
        var periods = mergedPeriods(facts, upgrades: upgrades)
        var replaced = Set(periods.filter(\.upgraded).map(\.period.id))
        endPeriodsInterruptedByOtherProducts(&periods, replaced: &replaced)
        bridgeUpgrades(&periods)

        var result: [Period] = periods.map { merged in
            var period = merged.period
            // An upgraded transaction's cancellation is no refund, though a payload that missed `is_upgraded` may
            // state it as one (to the second: receipts state whole seconds); a refund at another time (an upgraded
            // transaction refunded later) is one.
            if let revocation = cancellations[period.id],
               !merged.upgraded || upgrades[period.id].map({ abs($0 - revocation.at) >= 1_000 }) ?? true {
                period.revokedAt = revocation.at
                period.refundedPerHundredThousand = revocation.share
                period.revocationReversedAt = revocation.reversedAt
            }
            return period
        }
        result.sort { ($0.start, $0.id) < ($1.start, $1.id) }

        let episodes = self.episodes(facts, periods: result)
        let episodeStarts = Set(episodes.map(\.failedAt))
        for index in result.indices {
            let period = result[index]
            if replaced.contains(period.id) {
                result[index].endReason = .replaced
            } else if !result.contains(where: { $0.id != period.id && $0.start <= period.end && period.end < $0.end }) {
                result[index].endReason = endReason(of: period, facts: facts, episodeStarts: episodeStarts,
                                                    nextStart: result.first { $0.start > period.end }?.start)
            }
        }

        let purchases = self.purchases(facts, cancellations: cancellations)
        let currencies = Set(rows.compactMap(\.currency)).sorted()
        return SubscriptionHistory(platform: .apple, id: id, periods: result, episodes: episodes,
                                   purchases: purchases, currencies: currencies)
    }

    /// A typed fact and when it was stated, in the builder's total order.
    struct Statement {
        var observedAt: Millis
        var fact: AppleFact
    }

    // MARK: Periods

    struct MergedPeriod {
        var period: Period
        var upgraded: Bool
    }

    /// `facts` with every transaction id of a restored purchase event replaced by the event's: the builder then
    /// merges, refunds and upgrades the copies as one transaction.
    private static func namedByPurchaseEvent(_ facts: [Statement]) -> [Statement] {
        let events = purchaseEvents(facts)
        guard !events.isEmpty else { return facts }
        return facts.map { statement in
            var statement = statement
            switch statement.fact {
            case .period(var p): p.transactionId = events[p.transactionId] ?? p.transactionId; statement.fact = .period(p)
            case .upgrade(var u): u.transactionId = events[u.transactionId] ?? u.transactionId; statement.fact = .upgrade(u)
            case .revocation(var r): r.transactionId = events[r.transactionId] ?? r.transactionId; statement.fact = .revocation(r)
            case .refundReversed(var r):
                r.transactionId = events[r.transactionId] ?? r.transactionId
                statement.fact = .refundReversed(r)
            default: break
            }
            return statement
        }
    }

    /// The purchase event of each restored transaction: `restoreCompletedTransactions` re-issues a subscription's
    /// transactions under new `transaction_id`s, with the same `web_order_line_item_id` ("a unique identifier for
    /// purchase events across devices"), dates and product. Maps every id of such a group but one to that one:
    /// the id Apple issued first (the smallest number). Ids of no group are absent.
    private static func purchaseEvents(_ facts: [Statement]) -> [String: String] {
        var first: [String: String] = [:]
        var lineItem: [String: String] = [:]
        for case .period(let stated) in facts.lazy.map(\.fact) {
            guard let item = stated.webOrderLineItemId, item != "0" else { continue }
            lineItem[stated.transactionId] = item
            if let known = first[item], !issuedBefore(stated.transactionId, known) { continue }
            first[item] = stated.transactionId
        }
        var events: [String: String] = [:]
        for (id, item) in lineItem where first[item] != id { events[id] = first[item] }
        return events
    }

    /// Whether transaction id `a` was issued before `b`: Apple's ids are decimal numbers that grow, so the shorter
    /// first, then by bytes.
    private static func issuedBefore(_ a: String, _ b: String) -> Bool {
        a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count : a < b
    }

    /// When each upgraded transaction was cancelled for its upgrade, by `transaction_id`: the latest statement.
    private static func upgrades(_ facts: [Statement]) -> [String: Millis] {
        var upgrades: [String: Millis] = [:]
        for case .upgrade(let upgrade) in facts.lazy.map(\.fact) { upgrades[upgrade.transactionId] = upgrade.at }
        return upgrades
    }

    private func mergedPeriods(_ facts: [Statement], upgrades: [String: Millis]) -> [MergedPeriod] {
        var byId: [String: MergedPeriod] = [:]
        for case .period(let stated) in facts.lazy.map(\.fact) {
            let ref = stated.transactionId
            if var merged = byId[ref] {
                merged.period.start = stated.start
                merged.period.chargedAt = stated.start
                // A later expiry is an extension (RENEWAL_EXTENDED): the period keeps the end it was sold with, which
                // gives its billing duration; Apple never moves a transaction's expiry earlier.
                if stated.end > merged.period.end, merged.period.scheduledEnd == nil {
                    merged.period.scheduledEnd = merged.period.end
                }
                merged.period.end = stated.end
                if !stated.productId.isEmpty { merged.period.productId = stated.productId }
                // A price and its currency come from one statement (metrics.md: the payload's currency first). A
                // statement without a price (a receipt, a V1 notice) knows the currency only from its envelope, which
                // never overrides a priced statement's: the signed transaction's GBP 8.99 is not JPY 8.99 because a
                // receipt logged later came with `currency: JPY`. Among envelopes the first to carry the
                // transaction wins: a receipt repeats every past transaction, in the storefront of its own day.
                if let amount = stated.priceMicros {
                    merged.period.priceMicros = amount
                    merged.period.currency = stated.currency
                } else if merged.period.priceMicros == nil, merged.period.currency == nil, let currency = stated.currency {
                    merged.period.currency = currency
                }
                if stated.offer != .unstatedOffer {
                    merged.period.isTrial = stated.offer == .freeTrial
                    merged.period.isIntroductory = stated.offer == .introductory
                }
                merged.upgraded = merged.upgraded || stated.upgraded
                byId[ref] = merged
            } else {
                byId[ref] = MergedPeriod(
                    period: Period(id: ref, productId: stated.productId, start: stated.start, end: stated.end,
                                   isTrial: stated.offer == .freeTrial,
                                   isIntroductory: stated.offer == .introductory || stated.offer == .unstatedOffer,
                                   priceMicros: stated.priceMicros,
                                   currency: stated.currency),
                    upgraded: stated.upgraded)
            }
        }
        for (id, at) in upgrades where byId[id]?.upgraded == true { byId[id]?.period.end(replacedAt: at) }
        return byId.values.filter { $0.period.start < $0.period.end }.sorted { $0.period.id < $1.period.id }
    }

    /// Ends a period where a period of another product starts inside it (an immediate upgrade or crossgrade). A
    /// period that an upgrade itself ended interrupts nothing: a renewal Apple issued just before the user
    /// upgraded starts inside the new product's period, and is cut by it, not the other way round.
    private func endPeriodsInterruptedByOtherProducts(_ periods: inout [MergedPeriod], replaced: inout Set<String>) {
        let starts = periods.filter { !$0.upgraded }.map { ($0.period.start, $0.period.productId) }
        for index in periods.indices {
            let period = periods[index].period
            let interruption = starts
                .filter { $0.1 != period.productId && period.start < $0.0 && $0.0 < period.end }
                .map(\.0).min()
            if let interruption {
                periods[index].period.end(replacedAt: interruption)
                replaced.insert(period.id)
            }
        }
    }

    /// The longest gap (ms) between an upgrade's cancellation and the start of the period after it that is still
    /// the upgrade: Apple dates the two separately, seconds or more apart.
    static let upgradeGap: Millis = 86_400_000

    /// Extends each period an upgrade ended to the start of the next period when that starts within
    /// ``upgradeGap`` after its cancellation: the user moved to the new product without a moment of lapse, so no
    /// churn and reactivation appear in between.
    private func bridgeUpgrades(_ periods: inout [MergedPeriod]) {
        let starts = periods.map(\.period.start)
        for index in periods.indices where periods[index].upgraded {
            let period = periods[index].period
            let next = starts.filter { $0 > period.end && $0 - period.end <= Self.upgradeGap }.min()
            if let next { periods[index].period.end = next }
        }
    }

    // MARK: Revocations

    struct Cancellation {
        var at: Millis
        var share: Int64
        /// When a REFUND_REVERSED observed at or after the revocation undid it.
        var reversedAt: Millis?
    }

    /// The revocation per transaction id: the latest-observed revocation, and when a REFUND_REVERSED observed at or
    /// after it undid it (a report as of an earlier time still sees the refund).
    private static func cancellations(_ facts: [Statement]) -> [String: Cancellation] {
        var revoked: [String: (revocation: AppleFact.Revocation, observedAt: Millis)] = [:]
        var reversed: [String: Millis] = [:]
        for statement in facts {
            switch statement.fact {
            case .revocation(let revocation):
                revoked[revocation.transactionId] = (revocation, statement.observedAt)
            case .refundReversed(let reversal):
                reversed[reversal.transactionId] = max(reversed[reversal.transactionId] ?? statement.observedAt,
                                                       statement.observedAt)
            default:
                continue
            }
        }
        var result: [String: Cancellation] = [:]
        for (ref, stated) in revoked {
            let reversal = reversed[ref].flatMap { $0 >= stated.observedAt ? $0 : nil }
            result[ref] = Cancellation(at: stated.revocation.at, share: stated.revocation.share, reversedAt: reversal)
        }
        return result
    }

    // MARK: Episodes

    private func episodes(_ facts: [Statement], periods: [Period]) -> [BillingEpisode] {
        let ends = periods.map(\.end).sorted()
        var graceByStart: [Millis: Millis?] = [:]
        for statement in facts {
            guard case .billingIssue(let issue) = statement.fact else { continue }
            let previousEnd = ends.last { $0 <= issue.at }
            // A recovery opens an episode only at a period the archive holds that ended before it, within Apple's
            // longest retry: archived from mid-life, it may lack the period that failed.
            if issue.isRecovery {
                guard let previousEnd, previousEnd < issue.at,
                      issue.at <= BillingEpisode.latestLoss(failedAt: previousEnd) else { continue }
            }
            var failedAt = previousEnd ?? issue.at
            // A failure stated at a period end the archive shows renewed on time (a V1 notice whose receipt lacked
            // the newest renewal) failed at the end of those renewals, when the last one ended up to three days
            // before the statement (Apple sends a notice at its event and retries for three days; a backfill logged
            // long after proves nothing of the kind).
            if !issue.isRecovery {
                var renewedTo = failedAt
                while let renewed = periods.first(where: {
                    abs($0.start - renewedTo) <= 60_000 && $0.end > renewedTo && $0.end <= statement.observedAt
                }) {
                    renewedTo = renewed.end
                }
                if renewedTo > failedAt, statement.observedAt - renewedTo <= 3 * 86_400_000 { failedAt = renewedTo }
            }
            if let grace = issue.graceEnd {
                graceByStart[failedAt] = .some(grace)
            } else if graceByStart[failedAt] == nil {
                graceByStart[failedAt] = .some(nil)
            }
        }
        for (failedAt, grace) in Self.gracesKeptByRenewalDate(periods) where graceByStart[failedAt] == nil {
            graceByStart[failedAt] = .some(grace)
        }
        let billingExpiries = facts.compactMap { statement -> Millis? in
            guard case .expiry(let expiry) = statement.fact, expiry.reason == .billing else { return nil }
            return expiry.at
        }.sorted()
        // Any other expiry of the period that failed ends its episode too: the customer turned auto-renew off
        // during the retry (EXPIRED / VOLUNTARY), a price increase was not consented to, the product was
        // withdrawn. Such a fact is dated at the period's end; Apple stopped retrying by the notice's time (a
        // signed payload's `signedDate`, a receipt's request time: an upper bound).
        let otherExpiries = facts.compactMap { statement -> (periodEnd: Millis?, at: Millis)? in
            guard case .expiry(let expiry) = statement.fact, expiry.reason != .billing else { return nil }
            return (expiry.periodEnd, max(expiry.at, statement.observedAt))
        }
        return graceByStart.keys.sorted().map { failedAt in
            let grace = max(failedAt, (graceByStart[failedAt] ?? nil) ?? failedAt)
            // Never past Apple's longest retry: a later episode's notice cannot end this one.
            let longest = BillingEpisode.latestLoss(failedAt: failedAt)
            let endedOtherwise = otherExpiries
                .filter { ($0.periodEnd ?? failedAt) == failedAt && $0.at >= failedAt }
                .map(\.at).min()
            let lostAt = min(billingExpiries.first { $0 >= failedAt } ?? longest, endedOtherwise ?? longest, longest)
            if let recovery = periods.first(where: { $0.start >= failedAt && $0.start < lostAt }) {
                return BillingEpisode(failedAt: failedAt, graceEnd: grace, outcome: .recovered(at: recovery.start))
            }
            return BillingEpisode(failedAt: failedAt, graceEnd: grace, outcome: .lost(at: lostAt))
        }
    }

    /// Billing issues recovered in grace that no record states (polled receipts or statuses that missed the grace):
    /// a period that begins after the one before it ended, yet ends where a renewal at that end would have (within a
    /// minute, against more than that for a new billing date from its own start). A recovery in grace keeps the
    /// renewal date; one in billing retry, or a new purchase, starts a new one. Each as E and a grace end after the
    /// recovery: the shortest of Apple's grace periods (3, 16, 28 days) that reaches past it.
    private static func gracesKeptByRenewalDate(_ periods: [Period]) -> [(failedAt: Millis, graceEnd: Millis)] {
        let minute: Millis = 60_000, day: Millis = 86_400_000
        let ordered = periods.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        var graces: [(failedAt: Millis, graceEnd: Millis)] = []
        /// Where a period starting at `start` ends for each length Apple sells.
        func ends(from start: Millis) -> [Millis?] {
            [1, 2, 3, 6, 12].map { Timestamp.addingMonths($0, to: start) } + [start + 7 * day]
        }
        for (previous, next) in zip(ordered, ordered.dropFirst()) where next.start - previous.end > minute {
            // The renewal date kept, and not also a new one from the period's own start (month ends clamp both
            // to the same day: then nothing tells).
            let keptDate = zip(ends(from: previous.end), ends(from: next.start)).contains { kept, moved in
                (kept.map { abs($0 - next.end) <= minute } ?? false) && !(moved.map { abs($0 - next.end) <= minute } ?? false)
            }
            guard keptDate,
                  let graceEnd = [3, 16, 28].map({ previous.end + $0 * day }).first(where: { $0 > next.start }) else { continue }
            graces.append((previous.end, graceEnd))
        }
        return graces
    }

    // MARK: End reasons

    private func endReason(of period: Period, facts: [Statement], episodeStarts: Set<Millis>,
                           nextStart: Millis?) -> EndReason {
        if episodeStarts.contains(period.end) { return .billingIssue }
        let lastStatus = facts
            .compactMap { statement -> (status: AppleFact.RenewalStatus, observedAt: Millis)? in
                guard case .renewalStatus(let status) = statement.fact, status.at <= period.end else { return nil }
                return (status, statement.observedAt)
            }
            .max { ($0.status.at, $0.observedAt) < ($1.status.at, $1.observedAt) }
        if let lastStatus, !lastStatus.status.autoRenew { return .voluntary }
        let expiry = facts
            .compactMap { statement -> AppleFact.Expiry? in
                guard case .expiry(let expiry) = statement.fact else { return nil }
                if let end = expiry.periodEnd { return end == period.end ? expiry : nil }
                return expiry.at >= period.end && expiry.at < (nextStart ?? Millis.max) ? expiry : nil
            }
            .last
        switch expiry?.reason {
        case .voluntary?: return .voluntary
        case .billing?: return .billingIssue
        case .priceIncrease?: return .priceIncrease
        case .productUnavailable?: return .productUnavailable
        case .other?, .unknown?, nil: return .unknown
        }
    }

    // MARK: One-time purchases

    private func purchases(_ facts: [Statement], cancellations: [String: Cancellation]) -> [OneTimePurchase] {
        var byId: [String: OneTimePurchase] = [:]
        for case .oneTime(let stated) in facts.lazy.map(\.fact) {
            let ref = stated.transactionId
            var purchase = byId[ref] ?? OneTimePurchase(id: ref, productId: "", purchasedAt: stated.purchasedAt)
            purchase.purchasedAt = stated.purchasedAt
            if !stated.productId.isEmpty { purchase.productId = stated.productId }
            if let amount = stated.priceMicros { purchase.priceMicros = amount }
            if let currency = stated.currency { purchase.currency = currency }
            purchase.quantity = stated.quantity
            byId[ref] = purchase
        }
        return byId.values.map { purchase in
            var purchase = purchase
            if let cancellation = cancellations[purchase.id] {
                purchase.refunds = [OneTimePurchase.Refund(at: cancellation.at, parts: cancellation.share, whole: 100_000,
                                                           reversedAt: cancellation.reversedAt)]
            }
            return purchase
        }.sorted { ($0.purchasedAt, $0.id) < ($1.purchasedAt, $1.id) }
    }

    // MARK: Order

    /// A total order on facts: statement time first (so later statements are applied last), then every column.
    /// It reads the two facts where they lie, for ``Swift/Array/sortInPlace(by:)``.
    static func precedes(_ a: UnsafePointer<Fact>, _ b: UnsafePointer<Fact>) -> Bool {
        if a.pointee.observedAt != b.pointee.observedAt { return a.pointee.observedAt < b.pointee.observedAt }
        if a.pointee.kind != b.pointee.kind { return a.pointee.kind < b.pointee.kind }
        if a.pointee.at != b.pointee.at { return a.pointee.at < b.pointee.at }
        if a.pointee.subject != b.pointee.subject { return a.pointee.subject < b.pointee.subject }
        if a.pointee.ref != b.pointee.ref { return (a.pointee.ref ?? "") < (b.pointee.ref ?? "") }
        if a.pointee.end != b.pointee.end { return (a.pointee.end ?? .min) < (b.pointee.end ?? .min) }
        if a.pointee.detail != b.pointee.detail { return (a.pointee.detail ?? "") < (b.pointee.detail ?? "") }
        return Fact.precedesInLastColumns(a, b)
    }
}
