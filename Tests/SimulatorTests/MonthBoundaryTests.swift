import Testing
@testable import Simulator

/// DESIGN.md's boundary rule: a spell counts as active at the start of M when start < m0 <= end.
struct MonthBoundaryTests {
    @Test func aSpellEndingExactlyAtMidnightOfTheFirstIsActiveAtTheStartOfThatMonth() {
        var subscription = TimelineSubscription(platform: .apple, id: "edge")
        let at = ExampleTruthTests.at
        subscription.periods = [
            ExampleTruthTests.period("premium_monthly", "2024-03-01 00:00", "2024-04-01 00:00", price: 4_990_000, currency: "USD"),
            ExampleTruthTests.period("premium_monthly", "2024-04-01 00:00", "2024-05-01 00:00", price: 4_990_000, currency: "USD"),
            ExampleTruthTests.period("premium_monthly", "2024-05-01 00:00", "2024-06-01 00:00", price: 4_990_000, currency: "USD",
                                     reason: .voluntary),
        ]
        var calculator = TruthCalculator(scenario: .init(name: "edge", timeZoneIdentifier: "UTC", asOf: at("2024-07-15 12:00")),
                                         durations: ["premium_monthly": "P1M"], monthCount: 8)
        calculator.add(subscription)
        let rows = calculator.tables().first { $0.0 == "subscriptions_monthly" }?.1 ?? []
        func cells(_ month: String) -> [String: String] {
            let row = rows.first { r in r.contains { $0 == ("month", month) } && r.contains { $0 == ("platform", "all") } }
            return Dictionary(uniqueKeysWithValues: (row ?? []).map { ($0.0, $0.1) })
        }
        #expect(cells("2024-03")["new"] == "1")
        #expect(cells("2024-03")["active_start"] == "0")
        #expect(cells("2024-05")["active_end"] == "1")
        #expect(cells("2024-06")["active_start"] == "1")
        #expect(cells("2024-06")["churned_voluntary"] == "1")
        #expect(cells("2024-06")["churn_rate"] == "1.000000")
        #expect(cells("2024-06")["active_end"] == "0")
        #expect(cells("2024-07")["active_start"] == "0")
    }
}
