import Facts
import Foundation
import SubscriptionMetrics

/// SplitMix64: a small seeded generator, so that every random test is the same on every run and machine.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random histories shaped like the simulator's (built directly, as the other metrics tests do): both platforms,
/// trials that convert or not, renewals, billing issues recovered in grace or in retry, lost or open, refunds
/// (whole and prorated), upgrades and downgrades, a price increase, a currency change, Apple resubscribes,
/// Google pauses, unknown currencies, one-time purchases, a few subscriptions years before the others, and
/// periods after the as-of time. Every history keeps `SubscriptionHistory`'s invariants.
enum RandomHistories {
    /// 2024-06-15T12:00Z: mid-month, so that the last month is partial and later periods are cut.
    static let asOf = utc(2024, 6, 15, 12)

    static let products: [(id: String, days: Int64)] = [
        ("basic_monthly", 30), ("pro_monthly", 30), ("basic_weekly", 7), ("pro_yearly", 365), ("odd_quarterly", 91),
    ]

    /// Prices of `products` per currency (the price list has all but a few; the quarterly product has no
    /// duration, so it is inferred from the period length).
    static let pricesCSV = """
        platform,product_id,currency,price,duration
        apple,basic_monthly,USD,4.99,P1M
        apple,basic_monthly,EUR,4.49,P1M
        apple,basic_monthly,JPY,480,P1M
        apple,pro_monthly,USD,9.99,P1M
        apple,pro_monthly,EUR,8.99,P1M
        apple,basic_weekly,USD,1.99,P1W
        apple,basic_weekly,JPY,200,P1W
        apple,pro_yearly,USD,39.99,P1Y
        apple,pro_yearly,EUR,35.99,P1Y
        apple,odd_quarterly,USD,12.99,
        google,basic_monthly,USD,4.99,P1M
        google,basic_monthly,EUR,4.49,P1M
        google,pro_monthly,USD,9.99,P1M
        google,pro_monthly,JPY,1000,P1M
        google,basic_weekly,EUR,1.79,P1W
        google,pro_yearly,USD,39.99,P1Y
        google,odd_quarterly,EUR,11.99,
        """

    /// EUR and JPY into USD for most months (2024-02 EUR is missing on purpose: converted cells stay empty).
    static var fxCSV: String {
        var lines = ["month,currency,rate_to_reporting_currency"]
        for year in 2019...2024 {
            for month in 1...12 where !(year == 2024 && month > 6) {
                let label = "\(year)-" + (month < 10 ? "0" : "") + "\(month)"
                if label != "2024-02" { lines.append("\(label),EUR,1.0\(month)") }
                lines.append("\(label),JPY,0.0067")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func make(count: Int, seed: UInt64) -> [SubscriptionHistory] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { history(number: $0, random: &random) }
    }

    private static func history(number: Int, random: inout SeededGenerator) -> SubscriptionHistory {
        func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }
        func between(_ low: Millis, _ high: Millis) -> Millis { Millis.random(in: low..<high, using: &random) }

        let platform: Platform = chance(0.5) ? .apple : .google
        let id = "\(platform.rawValue)-\(number)"
        var currency: String? = chance(0.04) ? nil : ["USD", "USD", "EUR", "JPY"].randomElement(using: &random)
        var periods: [Period] = []
        var episodes: [BillingEpisode] = []
        var purchases: [OneTimePurchase] = []
        var t = chance(0.05) ? between(utc(2019, 3, 1), utc(2021, 12, 31)) : between(utc(2023, 1, 1), utc(2024, 6, 10))
        var product = products.randomElement(using: &random)!
        func finished() -> SubscriptionHistory {
            if chance(0.1) { purchases.append(purchase(at: between(utc(2023, 1, 1), utc(2024, 7, 1)), currency: currency, random: &random)) }
            let currencies = Set(periods.compactMap(\.currency) + purchases.compactMap(\.currency))
            var history = SubscriptionHistory(platform: platform, id: id, periods: periods, episodes: episodes, purchases: purchases,
                                              currencies: currencies.sorted())
            // A linked Google token only notifications name (chosen without a draw): counted, never a period.
            if platform == .google, id.utf8.count % 3 == 0 {
                history.notifiedOnlyTokens = [UnheldStatement(productId: product.id, at: t)]
            }
            // And a void of an order no period holds.
            if platform == .google, id.utf8.count % 3 == 1 {
                history.unplacedRefunds = [UnheldStatement(productId: product.id, at: t)]
            }
            return history
        }
        func periodId() -> String {
            platform == .apple ? "\(id)-t\(periods.count)" : "GPA.\(number)" + (periods.isEmpty ? "" : "..\(periods.count - 1)")
        }

        if chance(0.08) {
            // A subject with one-time purchases only.
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                purchases.append(purchase(at: between(t, t + 90 * day), currency: currency, random: &random))
            }
            return SubscriptionHistory(platform: platform, id: id, purchases: purchases, currencies: currency.map { [$0] } ?? [])
        }
        if chance(0.3) {
            let end = t + 7 * day
            let converts = chance(0.6)
            periods.append(Period(id: periodId(), productId: product.id, start: t, end: end, isTrial: true, currency: currency,
                                  endReason: converts ? .unknown : (chance(0.5) ? .voluntary : .billingIssue)))
            if !converts {
                if periods[0].endReason == .billingIssue {
                    // Lost after Apple's longest retry, or still in billing retry at any as-of (an outcome years
                    // later, which the engine reads as open: the trial's conversion stays pending).
                    episodes.append(BillingEpisode(failedAt: end, graceEnd: end,
                                                   outcome: .lost(at: end + (chance(0.5) ? 3_650 : 60) * day)))
                }
                return SubscriptionHistory(platform: platform, id: id, periods: periods, episodes: episodes,
                                           currencies: currency.map { [$0] } ?? [])
            }
            t = end
        }
        var statedPrice: Int64? = chance(0.4) ? [4_990_000, 9_990_000, 199_000_000].randomElement(using: &random) : nil
        for renewal in 0..<Int.random(in: 1...16, using: &random) {
            let start = t
            let end = start + product.days * day
            if chance(0.04), currency != nil { currency = currency == "EUR" ? "USD" : "EUR" }
            if chance(0.05), let price = statedPrice { statedPrice = price + 1_000_000 }
            // The first period of one spell in three is an introductory offer (chosen without a draw, so that no
            // other draw moves): without a stated price it is priced from the list, and counted as such.
            var period = Period(id: periodId(), productId: product.id, start: start, end: end,
                                isIntroductory: renewal == 0 && periods.count % 3 == 0, priceMicros: statedPrice,
                                currency: currency)
            // A Google first order seen only once expired (chosen without a draw too): counted as paid, and as such.
            period.isAssumedPaid = platform == .google && periods.isEmpty && id.utf8.count % 4 == 0
            // A Google proration period after a change of plan (likewise without a draw): unpriced, with its MRR.
            period.isProration = platform == .google && renewal == 0 && !periods.isEmpty && id.utf8.count % 5 == 0
            if chance(0.04) {
                // A refund (sometimes prorated) ends the subscription.
                period.revokedAt = between(start + 1, end)
                period.refundedPerHundredThousand = chance(0.7) ? 100_000 : Int64.random(in: 1...99_999, using: &random)
                periods.append(period)
                break
            }
            if chance(0.07), product.days > 7 {
                // An upgrade or downgrade inside the period: the old one ends at the change, replaced.
                let change = between(start + day, end - day)
                period.end = change
                period.endReason = .replaced
                periods.append(period)
                product = products.filter { $0.id != product.id }.randomElement(using: &random)!
                t = change
                continue
            }
            if chance(0.1) {
                period.endReason = .billingIssue
                periods.append(period)
                let grace = end + [0, 3 * day, 16 * day].randomElement(using: &random)!
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where grace > end:
                    let recovered = between(end + 1, grace)
                    episodes.append(BillingEpisode(failedAt: end, graceEnd: grace, outcome: .recovered(at: recovered)))
                    t = recovered
                case 0, 1:
                    let recovered = between(grace + 1, grace + 40 * day)
                    episodes.append(BillingEpisode(failedAt: end, graceEnd: grace, outcome: .recovered(at: recovered)))
                    t = recovered
                case 2:
                    episodes.append(BillingEpisode(failedAt: end, graceEnd: grace, outcome: .lost(at: between(grace, end + 60 * day))))
                    return finished()
                default:
                    // An outcome years later: open at any as-of.
                    episodes.append(BillingEpisode(failedAt: end, graceEnd: grace, outcome: .lost(at: end + 3_650 * day)))
                    return finished()
                }
                continue
            }
            if chance(0.06) {
                period.endReason = platform == .google && chance(0.4) ? .paused : .voluntary
                periods.append(period)
                // Apple resubscribes (same original transaction) and Google resumes after a pause come back later.
                guard platform == .apple || period.endReason == .paused, chance(0.5) else { return finished() }
                t = end + between(day, 90 * day)
                continue
            }
            if chance(0.02) { period.endReason = [.priceIncrease, .productUnavailable, .developerCancel].randomElement(using: &random)! }
            periods.append(period)
            if period.endReason != .unknown { return finished() }
            t = end
        }
        return finished()
    }

    private static func purchase(at time: Millis, currency: String?, random: inout SeededGenerator) -> OneTimePurchase {
        OneTimePurchase(id: "p\(time)", productId: Bool.random(using: &random) ? "coins_100" : "lifetime", purchasedAt: time,
                        priceMicros: Bool.random(using: &random) ? 2_990_000 : nil,
                        currency: Int.random(in: 0..<5, using: &random) == 0 ? nil : currency,
                        refunds: Int.random(in: 0..<8, using: &random) == 0 ? [OneTimePurchase.Refund(at: time + 3 * day)] : [])
    }
}
