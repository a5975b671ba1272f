import Facts
import Foundation
import SubscriptionMetrics
import Testing

/// ms UTC of a civil date-time (days-from-civil arithmetic, so tests need no formatter).
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0, ms: Int = 0) -> Millis {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = Int64(month)
    let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000 + Int64(second) * 1000 + Int64(ms)
}

let hour: Millis = 3_600_000
let day: Millis = 24 * hour

/// The prices of examples.md.
func examplePrices() throws -> PriceList {
    try PriceList(csv: """
        platform,product_id,currency,price,duration
        apple,premium_monthly,JPY,480,P1M
        apple,premium_monthly,USD,4.99,P1M
        google,premium_monthly,USD,4.99,P1M
        apple,premium_weekly,USD,1.99,P1W
        """)
}

func tables(_ histories: [SubscriptionHistory], asOf: Millis, timeZone: String = "UTC", prices: PriceList = .empty,
            currency: String? = nil, fx: FXRates? = nil) throws -> ReportTables {
    let zone = try #require(TimeZone(identifier: timeZone))
    var engine = MetricsEngine(options: ReportOptions(asOf: asOf, timeZone: zone, prices: prices,
                                                      reportingCurrency: currency, fxRates: fx))
    for history in histories { engine.add(history) }
    let result = engine.finish()
    expectIdentity(result)
    expectMRRIdentities(result)
    return result
}

/// metrics.md's identity, checked on every row of every test's subscriptions_monthly.
func expectIdentity(_ tables: ReportTables, sourceLocation: SourceLocation = #_sourceLocation) {
    for row in tables.subscriptionsMonthly {
        #expect(row.activeEnd == row.activeStart + row.new + row.reactivated + row.productChangesIn
                - row.productChangesOut - row.churned, "identity broken in \(line(row))", sourceLocation: sourceLocation)
        #expect(row.activeStart >= 0 && row.activeEnd >= 0, "negative actives in \(line(row))", sourceLocation: sourceLocation)
        if row.productId == "all" {
            #expect(row.productChangesIn == 0 && row.productChangesOut == 0, sourceLocation: sourceLocation)
        }
    }
}

/// metrics.md's three mrr_movements identities, on the written cents of every row (and of the converted amounts):
/// the movements lead from `mrr_start` to `mrr_end`; `mrr_start` is the previous month's `mrr_end` (0 without a
/// row); `mrr_end` is the sum of revenue_monthly's `mrr_end` cells of the month, platform and currency.
func expectMRRIdentities(_ tables: ReportTables, sourceLocation: SourceLocation = #_sourceLocation) {
    func previous(_ month: String) -> String {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let number = parts[0] * 12 + parts[1] - 2
        let monthOfYear = number % 12 + 1
        return "\(number / 12)-" + (monthOfYear < 10 ? "0" : "") + "\(monthOfYear)"
    }
    for row in tables.mrrMovements {
        let amounts = [row.mrrStart, row.new, row.expansion, row.contraction, row.churned, row.reactivation, row.mrrEnd]
        #expect(amounts.allSatisfy { $0.cents >= 0 }, "negative amount in \(line(row))", sourceLocation: sourceLocation)
        #expect(row.mrrEnd.cents == row.mrrStart.cents + row.new.cents + row.expansion.cents + row.reactivation.cents
                - row.contraction.cents - row.churned.cents, "movements do not add up in \(line(row))", sourceLocation: sourceLocation)
        let before = tables.mrrMovements.first {
            $0.month == previous(row.month) && $0.platform == row.platform && $0.currency == row.currency
        }
        #expect(row.mrrStart.cents == (before?.mrrEnd.cents ?? 0), "mrr_start is not the previous mrr_end in \(line(row))",
                sourceLocation: sourceLocation)
        let revenue = tables.revenueMonthly.filter { $0.month == row.month && $0.platform == row.platform && $0.currency == row.currency }
        #expect(row.mrrEnd.cents == revenue.reduce(0) { $0 + $1.mrrEnd.cents }, "mrr_end is not revenue's in \(line(row))",
                sourceLocation: sourceLocation)
        if let converted = row.converted, let start = converted.mrrStart?.cents, let end = converted.mrrEnd?.cents {
            let moves = [converted.new, converted.expansion, converted.reactivation, converted.contraction, converted.churned]
                .map { $0?.cents ?? -1 }
            #expect(moves.allSatisfy { $0 >= 0 } && end == start + moves[0] + moves[1] + moves[2] - moves[3] - moves[4],
                    "converted movements do not add up in \(line(row))", sourceLocation: sourceLocation)
            #expect(end == revenue.reduce(0) { $0 + ($1.converted?.mrrEnd?.cents ?? 0) }, sourceLocation: sourceLocation)
        }
    }
    // No month × platform × currency with MRR at its end lacks a row.
    for row in tables.revenueMonthly where row.mrrEnd.units != 0 {
        #expect(tables.mrrMovements.contains { $0.month == row.month && $0.platform == row.platform && $0.currency == row.currency },
                "no mrr_movements row for \(line(row))", sourceLocation: sourceLocation)
    }
}

/// A row as its CSV line (the fixtures have no fields that need quoting).
func line(_ row: SubscriptionsMonthlyRow) -> String { row.cells.map(\.text).joined(separator: ",") }
func line(_ row: RevenueMonthlyRow) -> String { row.cells.map(\.text).joined(separator: ",") }
func line(_ row: RetentionCohortRow) -> String { row.cells.map(\.text).joined(separator: ",") }
func line(_ row: TrialConversionRow) -> String { row.cells.map(\.text).joined(separator: ",") }
func line(_ row: GraceRecoveryRow) -> String { row.cells.map(\.text).joined(separator: ",") }
func line(_ row: MRRMovementRow) -> String { row.cells.map(\.text).joined(separator: ",") }

extension ReportTables {
    func subscriptions(platform: String, product: String) -> [String] {
        subscriptionsMonthly.filter { $0.platform == platform && $0.productId == product }.map(line)
    }

    func subscriptionRow(_ month: String, _ platform: String, _ product: String) -> SubscriptionsMonthlyRow? {
        subscriptionsMonthly.first { $0.month == month && $0.platform == platform && $0.productId == product }
    }
}

/// A paid monthly-ish period.
func paid(_ id: String, _ product: String, _ start: Millis, _ end: Millis, currency: String? = "USD",
          price: Int64? = nil, revokedAt: Millis? = nil, refunded: Int64 = 100_000,
          reason: EndReason = .unknown) -> Period {
    Period(id: id, productId: product, start: start, end: end, priceMicros: price, currency: currency,
           revokedAt: revokedAt, refundedPerHundredThousand: refunded, endReason: reason)
}

func trial(_ id: String, _ product: String, _ start: Millis, _ end: Millis, currency: String? = "USD") -> Period {
    Period(id: id, productId: product, start: start, end: end, isTrial: true, currency: currency)
}
