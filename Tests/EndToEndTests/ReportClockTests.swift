import Facts
import Foundation
import Ingest
import Ledger
import Pipeline
import Reporting
import Testing

/// Issue 18.2: "A far-future date exhausts memory in `report`. One 390-byte V1 notification with a purchase date
/// in the year 5,441,567 is used; `report` (default as-of = latest event) then builds a row per month up to it:
/// 23 GB and the OOM killer. ... the default as-of must never be later than the run's clock, whatever the
/// ledger holds." Ingest now quarantines such a date (`implausible_timestamp`); a date inside the plausible
/// window (up to ten years after the ingest's clock) can still lie after the report's clock.
@Suite struct ReportClockTests {
    /// 2025-07-01T00:00:00Z, the run's clock in these tests.
    static let now: Millis = 1_751_328_000_000

    /// A V1 notification (as Apple posted them: numbers as strings) dated 2030-01-01, after the report's clock
    /// and plausible for the ingest's (2026-01-01 + ten years).
    static let farFuture = #"{"notification_type":"INITIAL_BUY","environment":"PROD","unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[{"product_id":"pro","transaction_id":"7","original_transaction_id":"7","purchase_date_ms":"1893456000000","expires_date_ms":"1896048000000","in_app_ownership_type":"PURCHASED"}]}}"#

    @Test func theDefaultAsOfIsNeverLaterThanTheRunsClock() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<20) + [Self.farFuture], to: directory.file("in.ndjson"))
        let database = directory.file("l.sqlite")
        _ = try IngestJob(ledger: .sqlite(path: database), parser: RecordParser(times: IngestFixtures.times),
                          translator: try IngestFixtures.translator(), progress: .none)
            .run(inputs: [directory.file("in.ndjson")])
        let ledger = try SQLiteLedger(path: database, access: .readOnly)
        #expect(try ledger.statistics().lastEventAt ?? 0 >= 1_893_456_000_000, "the record is in the ledger")

        let settings = ReportJob.Settings(now: Self.now, formats: [.csv, .json], outputDirectory: directory.file("Reports"),
                                          generatedBy: "test")
        let outcome = try ReportJob(settings: settings).run(ledger: ledger)
        #expect(outcome.asOf == Self.now)
        let latest = try ledger.statistics().lastEventAt
        #expect(outcome.futureStatementAt == latest)
        let months = Set(outcome.tables.subscriptionsMonthly.map { $0.month })
        #expect(months.max() == "2025-07", "rows end at the clock's month, not in 2030")
        #expect(months.count < 24)

        // An explicit --as-of is the user's: it is kept.
        let explicit = ReportJob.Settings(asOf: 1_714_521_599_999, now: Self.now, formats: [.csv], outputDirectory: directory.file("R2"),
                                          generatedBy: "test")
        let cut = try ReportJob(settings: explicit).run(ledger: ledger)
        #expect(cut.asOf == 1_714_521_599_999)
        #expect(cut.futureStatementAt == nil)
    }
}

/// Issue 18.6: "Hidden `.tmp` files left in `--out` by a killed `report` are never removed: clean your own stale
/// temp files."
@Suite struct ReportTemporaryFilesTests {
    @Test func staleTemporaryFilesOfAKilledReportAreRemoved() throws {
        let directory = try TemporaryDirectory()
        let out = directory.file("Reports")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        // What a report killed while writing leaves: its process is gone (no pid reaches 2^22 + 1 on Linux).
        let stale = ".summary.json.4194305-3F2504E0-4F89-11D3-9A0C-0305E82C3301.tmp"
        // A report running now in another process (this one, for the test): its file must be left alone.
        let live = ".report.html.\(ProcessInfo.processInfo.processIdentifier)-6BA7B810-9DAD-11D1-80B4-00C04FD430C8.tmp"
        let foreign = [".keep.tmp", ".summary.json.tmp", "notes.tmp"]
        for name in [stale, live] + foreign {
            try Data("x".utf8).write(to: URL(fileURLWithPath: out + "/" + name))
        }
        try ReportWriter(directory: out).write([("summary.json", "{}\n")])
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        #expect(left == Set([live, "summary.json"] + foreign))
    }
}
