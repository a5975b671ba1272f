import Facts
import Foundation
import SubscriptionMetrics
import Reporting
import Testing

private func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0) throws -> Millis {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
    let date = try #require(calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour)))
    return Millis(date.timeIntervalSince1970 * 1000)
}

/// A small report: two subscriptions, one with a product id that needs CSV quoting, one refunded.
private func sampleTables(reversed: Bool = false, currency: String? = nil) throws -> ReportTables {
    let histories = [
        SubscriptionHistory(platform: .apple, id: "a", periods: [
            Period(id: "1", productId: "pro, \"yearly\"", start: try utc(2024, 1, 5), end: try utc(2025, 1, 5),
                   priceMicros: 59_990_000, currency: "USD", endReason: .voluntary),
        ]),
        SubscriptionHistory(platform: .google, id: "g", periods: [
            Period(id: "GPA.1", productId: "monthly", start: try utc(2024, 1, 20), end: try utc(2024, 2, 20),
                   priceMicros: 4_990_000, currency: "EUR", revokedAt: try utc(2024, 2, 1)),
        ], episodes: [
            // Lost after the as-of: open in the report.
            BillingEpisode(failedAt: try utc(2024, 1, 25), graceEnd: try utc(2024, 1, 25), outcome: .lost(at: try utc(2024, 3, 25))),
        ]),
    ]
    var engine = MetricsEngine(options: ReportOptions(asOf: try utc(2024, 2, 10), reportingCurrency: currency))
    for history in reversed ? histories.reversed() : histories { engine.add(history) }
    return engine.finish()
}

private let ingest = IngestStatistics(
    files: 3, read: 10, used: 6, duplicate: 1, excluded: 2, quarantined: 1,
    excludedByReason: ["test": 1, "sandbox": 1], quarantinedByReason: ["malformed_json": 1],
    damagedFiles: [.init(file: "b.tar.gz", offset: 512, reason: "truncated gzip"),
                   .init(file: "a.zip", offset: 7, reason: "bad \"central\" directory")],
    warnings: ["timestamps_in_seconds": 2])

@Suite struct CSVReportTests {
    @Test func filesInCLIOrderWithHeaders() throws {
        let files = CSVReport.files(try sampleTables())
        #expect(files.map(\.name) == ["subscriptions_monthly.csv", "revenue_monthly.csv", "mrr_movements.csv",
                                      "retention_cohorts.csv", "trial_conversion.csv", "grace_recovery.csv"])
        #expect(files.map { $0.contents.prefix { $0 != "\n" } } == [
            "month,platform,product_id,active_start,new,reactivated,product_changes_in,product_changes_out,churned,churned_voluntary,churned_involuntary,churned_refund,churned_paused,churned_other,active_end,churn_rate,net_churn_rate,active_trials_end",
            "month,platform,product_id,currency,gross,refunds,net,transactions,refunded_transactions,unpriced_transactions,mrr_end",
            "month,platform,currency,mrr_start,new,expansion,contraction,churned,reactivation,mrr_end,new_count,expansion_count,contraction_count,churned_count,reactivation_count",
            "cohort_month,platform,duration,cohort_size,period,retained,retention_rate,complete",
            "cohort_month,platform,product_id,trials,converted,abandoned,pending,conversion_rate",
            "month,platform,episodes,with_grace,recovered_in_grace,recovered_in_retry,lost,open,recovery_rate,grace_recovery_rate,median_hours_to_recover",
        ])
    }

    /// RFC 4180: a field with a comma or quote is quoted, quotes doubled; undefined rates are empty cells.
    @Test func quotingAndEmptyCells() throws {
        let files = CSVReport.files(try sampleTables())
        #expect(files[1].contents == #"""
            month,platform,product_id,currency,gross,refunds,net,transactions,refunded_transactions,unpriced_transactions,mrr_end
            2024-01,apple,"pro, ""yearly""",USD,59.99,0.00,59.99,1,0,0,5.00
            2024-01,google,monthly,EUR,4.99,0.00,4.99,1,0,0,4.99
            2024-02,apple,"pro, ""yearly""",USD,0.00,0.00,0.00,0,0,0,5.00
            2024-02,google,monthly,EUR,0.00,4.99,-4.99,0,1,0,0.00

            """#)
        #expect(files[5].contents.hasSuffix("\n2024-01,google,1,0,0,0,0,1,,,\n"))
        // 59.99 a year is 4.999166... a month: 5.00, the same figure in both tables.
        #expect(files[2].contents == """
            month,platform,currency,mrr_start,new,expansion,contraction,churned,reactivation,mrr_end,new_count,expansion_count,contraction_count,churned_count,reactivation_count
            2024-01,apple,USD,0.00,5.00,0.00,0.00,0.00,0.00,5.00,1,0,0,0,0
            2024-01,google,EUR,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0
            2024-02,apple,USD,5.00,0.00,0.00,0.00,0.00,0.00,5.00,0,0,0,0,0
            2024-02,google,EUR,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0

            """)
    }
}

@Suite struct SummaryJSONTests {
    @Test func exactText() throws {
        let text = SummaryJSON.render(try sampleTables(currency: "EUR"), ingest: ingest, asOf: try utc(2024, 2, 10) + 999,
                                      timeZone: try #require(TimeZone(identifier: "Europe/Berlin")), generatedBy: "subledger test")
        let expected = #"""
            {
              "as_of": "2024-02-10T01:00:00.999+01:00",
              "timezone": "Europe/Berlin",
              "generated_by": "subledger test",
              "ingest": {"files":3,"records":{"read":10,"used":6,"duplicate":1,"excluded":2,"quarantined":1},"excluded_by_reason":{"sandbox":1,"test":1},"quarantined_by_reason":{"malformed_json":1},"damaged_files":[{"file":"a.zip","offset":7,"reason":"bad \"central\" directory"},{"file":"b.tar.gz","offset":512,"reason":"truncated gzip"}],"skipped_files":[],"first_event_at":null,"last_event_at":null,"warnings":{"message_id_conflicts":0,"parts_quarantined":0,"timestamps_in_seconds":2}},
              "warnings": {"unpriced_transactions":0,"unpriced_products":[],"list_priced_offers":0,"list_priced_offer_products":[],"assumed_paid_periods":0,"assumed_paid_period_products":[],"proration_periods":0,"proration_period_products":[],"notification_only_tokens":0,"notification_only_token_products":[],"unplaced_refunds":0,"unplaced_refund_products":[],"missing_fx_rates":["2024-01 USD","2024-02 USD"]},
              "subscriptions_monthly": [
                {"month":"2024-01","platform":"all","product_id":"all","active_start":0,"new":2,"reactivated":0,"product_changes_in":0,"product_changes_out":0,"churned":0,"churned_voluntary":0,"churned_involuntary":0,"churned_refund":0,"churned_paused":0,"churned_other":0,"active_end":2,"churn_rate":null,"net_churn_rate":null,"active_trials_end":0},
            """#
        #expect(text.hasPrefix(expected))
        #expect(text.contains(#"""
            {"month":"2024-02","platform":"google","product_id":"monthly","currency":"EUR","gross":0.00,"refunds":4.99,"net":-4.99,"transactions":0,"refunded_transactions":1,"unpriced_transactions":0,"mrr_end":0.00,"gross_converted":0.00,"refunds_converted":4.99,"net_converted":-4.99,"mrr_end_converted":0.00}
            """#))
        #expect(text.contains(#"""
            {"month":"2024-01","platform":"apple","product_id":"pro, \"yearly\"","currency":"USD","gross":59.99,"refunds":0.00,"net":59.99,"transactions":1,"refunded_transactions":0,"unpriced_transactions":0,"mrr_end":5.00,"gross_converted":null,"refunds_converted":null,"net_converted":null,"mrr_end_converted":null}
            """#))
        // mrr_movements follows revenue_monthly (cli.md's order), converted columns after the counts.
        #expect(text.contains(#"""
              "mrr_movements": [
                {"month":"2024-01","platform":"apple","currency":"USD","mrr_start":0.00,"new":5.00,"expansion":0.00,"contraction":0.00,"churned":0.00,"reactivation":0.00,"mrr_end":5.00,"new_count":1,"expansion_count":0,"contraction_count":0,"churned_count":0,"reactivation_count":0,"mrr_start_converted":null,"new_converted":null,"expansion_converted":null,"contraction_converted":null,"churned_converted":null,"reactivation_converted":null,"mrr_end_converted":null},
                {"month":"2024-01","platform":"google","currency":"EUR","mrr_start":0.00,"new":4.99,"expansion":0.00,"contraction":0.00,"churned":0.00,"reactivation":0.00,"mrr_end":4.99,"new_count":1,"expansion_count":0,"contraction_count":0,"churned_count":0,"reactivation_count":0,"mrr_start_converted":0.00,"new_converted":4.99,"expansion_converted":0.00,"contraction_converted":0.00,"churned_converted":0.00,"reactivation_converted":0.00,"mrr_end_converted":4.99},
                {"month":"2024-02","platform":"apple","currency":"USD","mrr_start":5.00,"new":0.00,"expansion":0.00,"contraction":0.00,"churned":0.00,"reactivation":0.00,"mrr_end":5.00,"new_count":0,"expansion_count":0,"contraction_count":0,"churned_count":0,"reactivation_count":0,"mrr_start_converted":null,"new_converted":null,"expansion_converted":null,"contraction_converted":null,"churned_converted":null,"reactivation_converted":null,"mrr_end_converted":null},
                {"month":"2024-02","platform":"google","currency":"EUR","mrr_start":4.99,"new":0.00,"expansion":0.00,"contraction":0.00,"churned":4.99,"reactivation":0.00,"mrr_end":0.00,"new_count":0,"expansion_count":0,"contraction_count":0,"churned_count":1,"reactivation_count":0,"mrr_start_converted":4.99,"new_converted":0.00,"expansion_converted":0.00,"contraction_converted":0.00,"churned_converted":4.99,"reactivation_converted":0.00,"mrr_end_converted":0.00}
              ],
              "retention_cohorts": [
            """#))
        #expect(text.contains(#"""
              "trial_conversion": [],
              "grace_recovery": [
                {"month":"2024-01","platform":"google","episodes":1,"with_grace":0,"recovered_in_grace":0,"recovered_in_retry":0,"lost":0,"open":1,"recovery_rate":null,"grace_recovery_rate":null,"median_hours_to_recover":null}
              ]
            }

            """#))
        #expect(text.contains("\"complete\":false"))
        // It is JSON: Foundation's parser accepts it and sees every table.
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(object?.keys.sorted() == ["as_of", "generated_by", "grace_recovery", "ingest", "mrr_movements", "retention_cohorts",
                                          "revenue_monthly", "subscriptions_monthly", "timezone", "trial_conversion", "warnings"])
    }

    /// The same histories in another order give the same bytes, CSV and JSON.
    @Test func byteIdenticalOutput() throws {
        let first = try sampleTables()
        let second = try sampleTables(reversed: true)
        let asOf = try utc(2024, 2, 10)
        let zone = try #require(TimeZone(identifier: "UTC"))
        #expect(CSVReport.files(first).map(\.contents) == CSVReport.files(second).map(\.contents))
        #expect(SummaryJSON.render(first, ingest: ingest, asOf: asOf, timeZone: zone, generatedBy: "x")
                == SummaryJSON.render(second, ingest: ingest, asOf: asOf, timeZone: zone, generatedBy: "x"))
    }
}

@Suite struct ReportWriterTests {
    @Test func writesEveryFileAndLeavesNoTemporaries() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("subledger-reporting-\(UUID().uuidString)").appendingPathComponent("out").path
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        let writer = ReportWriter(directory: directory)
        try writer.write([(name: "a.csv", contents: "x\n"), (name: "summary.json", contents: "{}\n")])
        try writer.write([(name: "a.csv", contents: "y\n")])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["a.csv", "summary.json"])
        #expect(try String(contentsOfFile: directory + "/a.csv", encoding: .utf8) == "y\n")
    }

    @Test func rejectsPathsAndKeepsPreviousFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subledger-reporting-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = ReportWriter(directory: directory)
        try writer.write([(name: "a.csv", contents: "old\n")])
        #expect(throws: ReportWriteError.self) {
            try writer.write([(name: "a.csv", contents: "new\n"), (name: "../escape.csv", contents: "z\n")])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["a.csv"])
        #expect(try String(contentsOfFile: directory + "/a.csv", encoding: .utf8) == "old\n")
    }
}
