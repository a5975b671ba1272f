/// Decides what happens to each simulated subscriber: products, trials, renewals, billing issues, refunds,
/// upgrades, pauses, resubscribes and one-time purchases, all drawn from a seeded generator.
///
/// Every random instant is put on an odd minute (`hh:m1:00.000` with m odd), so no event falls on a month
/// boundary in UTC or Asia/Tokyo, and every difference between two instants is a whole number of 2-minute
/// steps (recovery hours never sit on a rounding tie).
struct SubscriberGenerator: Sendable {
    let catalog: Catalog
    /// First simulated instant: 2024-01-01T00:00Z.
    let start: Int64
    /// The last instant anything may happen (ms UTC): one minute before the end of the last simulated month,
    /// so every record (logged seconds after its event) is logged before the as-of time.
    let horizon: Int64
    /// Where a new subscriber may take an introductory offer: Apple subscriptions that begin at or after
    /// `appleFrom` (ms UTC; the V2 cut-over), whose signed transactions state each period's price, and Google
    /// subscriptions whose offer orders all begin before `googleBefore` (the v2 cut-over), so that a v1 resource
    /// (`introductoryPriceInfo`) shows each of them. metrics.md prices a period from its payload before the price
    /// list, so the offer's price is then what the pipeline must find.
    let offerWindows: (appleFrom: Int64, googleBefore: Int64)

    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// Puts an instant on an odd minute, at or after it.
    static func anchor(_ millis: Int64) -> Int64 {
        let twoMinutes: Int64 = 120_000
        let base = millis - ((millis % twoMinutes) + twoMinutes) % twoMinutes
        return base + minute < millis ? base + twoMinutes + minute : base + minute
    }

    /// Simulates subscriber `index`: one subscription, or two on Google when the user resubscribes after
    /// expiry (a new, unlinked token).
    func subscriber(index: Int, seed: UInt64) -> [SimulatedSubscription] {
        var rng = SeededGenerator(seed: seed, stream: UInt64(index) + 1)
        let boundaryStart = UTCCalendar.adding(months: 2, to: start)
        if index == 1, UTCCalendar.adding(months: 3, to: boundaryStart) <= horizon {
            // The deliberate month-boundary case: every period starts and ends at 00:00Z on the 1st.
            var state = Builder(catalog: catalog, horizon: horizon, apple: true, currency: "USD",
                                userId: "u-\(String(index + 100_000))", isTest: false, index: index, chain: 0,
                                offerWindows: offerWindows)
            state.runOnMonthBoundaries(from: boundaryStart, rng: &rng)
            return [state.subscription]
        }
        let apple = rng.chance(0.5)
        let isTest = rng.chance(0.03)
        let currencyRoll = rng.next() % 100
        let currency = currencyRoll < 40 ? "USD" : currencyRoll < 65 ? "JPY" : currencyRoll < 90 ? "EUR" : "GBP"
        let productRoll = rng.next() % 100
        let product = productRoll < 25 ? catalog.weekly : productRoll < 80 ? catalog.monthly : catalog.annual
        let latestStart = horizon - 10 * SubscriberGenerator.day
        let begin = SubscriberGenerator.anchor(rng.int(start...latestStart))
        let userId = "u-\(String(index + 100_000))"
        var result: [SimulatedSubscription] = []
        var next: (Int64, Catalog.Product)? = (begin, product)
        var chainIndex = 0
        while case let (at, firstProduct)? = next, chainIndex < 3, at <= horizon {
            var state = Builder(catalog: catalog, horizon: horizon, apple: apple, currency: currency,
                                userId: userId, isTest: isTest, index: index, chain: chainIndex,
                                offerWindows: offerWindows)
            next = state.run(from: at, product: firstProduct, allowTrial: chainIndex == 0, rng: &rng)
            result.append(state.subscription)
            chainIndex += 1
        }
        return result
    }

    /// Builds one subscription period by period.
    private struct Builder {
        let catalog: Catalog
        let horizon: Int64
        let apple: Bool
        var subscription: SimulatedSubscription
        private var transactionCounter = 0
        private var orderCounters: [String: Int] = [:]
        private let index: Int
        private let chain: Int
        private let offerWindows: (appleFrom: Int64, googleBefore: Int64)
        /// Paid periods still to be charged at the introductory offer's price.
        private var offerCyclesLeft = 0

        init(catalog: Catalog, horizon: Int64, apple: Bool, currency: String, userId: String, isTest: Bool,
             index: Int, chain: Int, offerWindows: (appleFrom: Int64, googleBefore: Int64)) {
            self.catalog = catalog
            self.horizon = horizon
            self.apple = apple
            self.index = index
            self.chain = chain
            self.offerWindows = offerWindows
            let id = apple ? String(2_000_000_000_000_000 + Int64(index) * 1000)
                           : Builder.token(index: index, chain: chain, upgrade: 0)
            var grace: [String: Int64] = [:]
            for product in catalog.subscriptions {
                grace[product.id] = apple ? product.appleGraceMillis : product.googleGraceMillis
            }
            subscription = SimulatedSubscription(
                timeline: TimelineSubscription(platform: apple ? .apple : .google, id: id), events: [],
                userId: userId, currency: currency, isTest: isTest, graceMillis: grace, autoRenewChanges: [],
                tokens: apple ? [] : [(id, nil)], orderBases: [:])
            if !apple {
                subscription.orderBases[id] = Builder.orderBase(index: index, chain: chain, upgrade: 0)
            }
        }

        /// A Google purchase token: long, opaque, unique per subscriber, chain and upgrade.
        static func token(index: Int, chain: Int, upgrade: Int) -> String {
            var rng = SeededGenerator(seed: UInt64(index) &* 31 &+ UInt64(chain) &* 7 &+ UInt64(upgrade), stream: 99)
            let letters = Array("abcdefghijklmnopqrstuvwxyz")
            let head = String((0..<24).map { _ in letters[Int(rng.next() % 26)] })
            return "\(head).AO-J1O\(index)x\(chain)x\(upgrade)\(rng.hex(40))"
        }

        static func orderBase(index: Int, chain: Int, upgrade: Int) -> String {
            let n = index * 9 + chain * 3 + upgrade
            let digits = String(1_000_000_000_000_000 + n)
            let d = Array(digits.dropFirst())
            return "GPA.33\(String(d[0..<2]))-\(String(d[2..<6]))-\(String(d[6..<10]))-\(String(d[10..<15]))"
        }

        private var grace: (Catalog.Product) -> Int64 {
            { [apple] product in apple ? product.appleGraceMillis : product.googleGraceMillis }
        }

        /// Adds a period; returns its index.
        private mutating func addPeriod(_ product: Catalog.Product, start: Int64, end: Int64, trial: Bool) -> Int {
            let transactionId: String
            let token: String
            if apple {
                transactionId = String(2_000_000_000_000_000 + Int64(index) * 1000 + Int64(transactionCounter))
                token = ""
            } else {
                token = subscription.tokens[subscription.tokens.count - 1].token
                let base = subscription.orderBases[token] ?? "GPA.0"
                let n = orderCounters[token, default: -1]
                transactionId = n < 0 ? base : "\(base)..\(n)"
                orderCounters[token] = n + 1
            }
            transactionCounter += 1
            var period = TimelinePeriod(
                product: product.id, transactionId: transactionId, token: token, start: start, end: end, trial: trial,
                priceMicros: trial ? nil : product.prices[subscription.currency], currency: subscription.currency)
            if !trial, offerCyclesLeft > 0, let offer = product.introductoryPrices[subscription.currency] {
                period.introductory = true
                period.priceMicros = offer
                offerCyclesLeft -= 1
            }
            subscription.timeline.periods.append(period)
            return subscription.timeline.periods.count - 1
        }

        private mutating func event(_ at: Int64, _ kind: StoreEvent.Kind) {
            subscription.events.append(StoreEvent(at: at, kind: kind))
        }

        private func randomInstant(after a: Int64, before b: Int64, rng: inout SeededGenerator) -> Int64 {
            guard b - a > 2 * SubscriberGenerator.hour else { return SubscriberGenerator.anchor(a) }
            return SubscriberGenerator.anchor(rng.int((a + SubscriberGenerator.hour)...(b - SubscriberGenerator.hour)))
        }

        /// Three monthly periods from `begin` (00:00Z on the 1st of a month), auto-renew switched off in the third:
        /// the subscription expires exactly at a month boundary, where DESIGN.md's rule (active at the start of
        /// M when start < m0 <= end) decides.
        mutating func runOnMonthBoundaries(from begin: Int64, rng: inout SeededGenerator) {
            let product = catalog.monthly
            var current = addPeriod(product, start: begin, end: catalog.end(of: product, from: begin), trial: false)
            event(begin, .purchase(period: current))
            subscription.autoRenewChanges.append((begin, true))
            for _ in 0..<2 {
                let start = subscription.timeline.periods[current].end
                current = addPeriod(product, start: start, end: catalog.end(of: product, from: start), trial: false)
                event(start, .renewal(period: current))
            }
            let last = subscription.timeline.periods[current]
            let off = randomInstant(after: last.start, before: last.end, rng: &rng)
            event(off, .autoRenewOff)
            subscription.autoRenewChanges.append((off, false))
            subscription.timeline.periods[current].endReason = .voluntary
            event(last.end, .expired(period: current))
        }

        /// Runs the subscription from its first purchase; returns the start of a Google resubscribe (a new
        /// subscription) if the user comes back after expiry.
        mutating func run(from begin: Int64, product first: Catalog.Product, allowTrial: Bool,
                          rng: inout SeededGenerator) -> (Int64, Catalog.Product)? {
            let day = SubscriberGenerator.day
            var product = first
            let trial = allowTrial && product.hasTrial && rng.chance(0.35)
            // A new subscriber takes the introductory offer three times in ten, chosen by the first instant (a whole
            // number of 2-minute steps) so that the random stream stays as it was. A Google one begins 150 days
            // before the window closes: a trial, two monthly orders, grace, hold or a pause fit in them. Google
            // (legacy `introductoryPriceInfo`) sells a free trial and an introductory price together, the trial
            // first; Apple one introductory offer per subscription, so not after a trial.
            let inWindow = apple ? begin >= offerWindows.appleFrom : begin + 150 * day < offerWindows.googleBefore
            if allowTrial, !(apple && trial), inWindow, (begin / 120_000) % 10 < 3 {
                offerCyclesLeft = product.introductoryCycles
            }
            var current = addPeriod(product, start: begin, end: trial ? begin + 7 * day : catalog.end(of: product, from: begin),
                                    trial: trial)
            event(begin, .purchase(period: current))
            subscription.autoRenewChanges.append((begin, true))
            var upgraded = false
            var paused = false
            var resubscribed = false

            if rng.chance(0.12) {
                // Consumables / one-time products bought alongside the subscription.
                for _ in 0..<(1 + Int(rng.next() % 2)) {
                    let at = randomInstant(after: begin, before: min(horizon, begin + 120 * day), rng: &rng)
                    guard at <= horizon, let price = catalog.coins.prices[subscription.currency] else { continue }
                    // One purchase in five is of three units at once, chosen by its instant so that the random
                    // stream (and every other draw of a seed) stays as it was.
                    let quantity: Int64 = at % 5 == 0 ? 3 : 1
                    subscription.timeline.oneTimePurchases.append(TimelineOneTimePurchase(
                        product: catalog.coins.id, at: at, quantity: quantity, priceMicros: price * quantity,
                        currency: subscription.currency))
                    event(at, .oneTime(index: subscription.timeline.oneTimePurchases.count - 1))
                }
            }

            while true {
                let period = subscription.timeline.periods[current]
                let end = period.end
                guard end <= horizon else { return nil }

                if !period.trial, rng.chance(0.025) {
                    let r = randomInstant(after: period.start, before: end, rng: &rng)
                    subscription.timeline.periods[current].revokedAt = r
                    subscription.timeline.periods[current].endReason = .other
                    event(r, .refund(period: current))
                    return nil
                }
                if !period.trial, !upgraded, product.id == catalog.monthly.id, rng.chance(0.05) {
                    let u = randomInstant(after: period.start + day, before: end - day, rng: &rng)
                    upgraded = true
                    subscription.timeline.periods[current].scheduledEnd = end
                    subscription.timeline.periods[current].end = u
                    subscription.timeline.periods[current].endReason = .replaced
                    if !apple {
                        let token = Builder.token(index: index, chain: chain, upgrade: 1)
                        subscription.orderBases[token] = Builder.orderBase(index: index, chain: chain, upgrade: 1)
                        subscription.tokens.append((token, subscription.tokens[subscription.tokens.count - 1].token))
                    }
                    product = catalog.annual
                    offerCyclesLeft = 0
                    let next = addPeriod(product, start: u, end: catalog.end(of: product, from: u), trial: false)
                    event(u, .upgrade(from: current, to: next))
                    current = next
                    continue
                }
                let voluntary = period.trial ? 0.35 : product.unit == .week ? 0.10 : product.unit == .month ? 0.07 : 0.30
                if rng.chance(voluntary) {
                    let off = randomInstant(after: period.start, before: end, rng: &rng)
                    event(off, .autoRenewOff)
                    subscription.autoRenewChanges.append((off, false))
                    subscription.timeline.periods[current].endReason = .voluntary
                    event(end, .expired(period: current))
                    guard !resubscribed, rng.chance(0.3) else { return nil }
                    resubscribed = true
                    let back = SubscriberGenerator.anchor(end + rng.int((5 * day)...(80 * day)))
                    if !apple { return (back, product) }
                    guard back <= horizon else { return nil }
                    offerCyclesLeft = 0
                    let next = addPeriod(product, start: back, end: catalog.end(of: product, from: back), trial: false)
                    subscription.autoRenewChanges.append((back, true))
                    event(back, .resubscribe(period: next))
                    current = next
                    continue
                }
                if rng.chance(0.05) {
                    // Auto-renew switched off and on again within the period: no churn.
                    let off = randomInstant(after: period.start, before: end, rng: &rng)
                    let on = randomInstant(after: off, before: end, rng: &rng)
                    if off < on {
                        event(off, .autoRenewOff)
                        event(on, .autoRenewOn)
                        subscription.autoRenewChanges.append((off, false))
                        subscription.autoRenewChanges.append((on, true))
                    }
                }
                if !apple, !paused, !period.trial, product.unit == .month, rng.chance(0.06) {
                    paused = true
                    let resume = end + (rng.chance(0.5) ? 30 : 61) * day
                    event(randomInstant(after: period.start, before: end, rng: &rng), .pauseScheduled(resumeAt: resume))
                    subscription.timeline.periods[current].endReason = .paused
                    event(end, .paused(period: current))
                    guard resume <= horizon else { return nil }
                    let next = addPeriod(product, start: resume, end: catalog.end(of: product, from: resume), trial: false)
                    event(resume, .resumed(period: next))
                    current = next
                    continue
                }
                if rng.chance(period.trial ? 0.10 : 0.08) {
                    let graceMillis = grace(product)
                    let g = end + graceMillis
                    subscription.timeline.periods[current].endReason = .billingIssue
                    let episode = subscription.timeline.episodes.count
                    event(end, .billingFailed(episode: episode))
                    let roll = rng.next() % 100
                    if graceMillis > 0, roll < 45 {
                        let t = randomInstant(after: end, before: g, rng: &rng)
                        subscription.timeline.episodes.append(TimelineEpisode(start: end, graceEnd: g, outcome: .recovered(t)))
                        let next = addPeriod(product, start: t, end: catalog.end(of: product, from: end), trial: false)
                        event(t, .recovered(episode: episode, period: next))
                        current = next
                        continue
                    }
                    if graceMillis > 0 { event(g, .graceExpired(episode: episode)) }
                    let retryEnd = apple ? end + 60 * day : g + 30 * day
                    if roll < 75 {
                        let t = randomInstant(after: g, before: retryEnd, rng: &rng)
                        subscription.timeline.episodes.append(TimelineEpisode(start: end, graceEnd: g, outcome: .recovered(t)))
                        let next = addPeriod(product, start: t, end: catalog.end(of: product, from: t), trial: false)
                        event(t, .recovered(episode: episode, period: next))
                        current = next
                        continue
                    }
                    subscription.timeline.episodes.append(TimelineEpisode(start: end, graceEnd: g, outcome: .lost(retryEnd)))
                    event(retryEnd, .billingLost(episode: episode))
                    return nil
                }
                let next = addPeriod(product, start: end, end: catalog.end(of: product, from: end), trial: false)
                event(end, .renewal(period: next))
                current = next
            }
        }
    }
}
