import Facts
import Foundation
import Ingest
import Ledger
import Pipeline
import Testing

/// Issue 18: a time at the edge of Int64 once bricked a ledger (every `status` and `report` crashed). Ingest now
/// stops it; and a ledger that already holds one (written before the check) still reports, leaving it out.
@Suite struct ExtremeTimesTests {
    @Test func anIngestQuarantinesTheTimeAndTheLedgerStaysUsable() throws {
        let directory = try TemporaryDirectory()
        let bad = IngestFixtures.subscription(2).replacingOccurrences(of: #""startTimeMillis":"\#(IngestFixtures.march2024 + 120_000)""#,
                                                                     with: #""startTimeMillis":"-9223372036854775808""#)
        let badEnvelope = IngestFixtures.subscription(3).replacingOccurrences(of: #""received_at":\#(IngestFixtures.march2024 + 184_000)"#,
                                                                             with: #""received_at":-9223372036854775808"#)
        try IngestFixtures.write([IngestFixtures.subscription(1), bad, badEnvelope], to: directory.file("in.ndjson"))
        let database = directory.file("l.sqlite")
        let job = IngestJob(ledger: .sqlite(path: database), parser: RecordParser(times: IngestFixtures.times),
                            translator: try IngestFixtures.translator(), progress: .none)
        let run = try job.run(inputs: [directory.file("in.ndjson")]).statistics
        #expect(run.used == 1 && run.quarantinedByReason == ["implausible_timestamp": 2])
        let ledger = try SQLiteLedger(path: database, access: .readOnly)
        var details: [String] = []
        try ledger.forEachQuarantined(reason: "implausible_timestamp") { details.append($0.detail) }
        #expect(details.count == 2)
        #expect(details.contains { $0.hasPrefix("startTimeMillis is -9223372036854775808 ms") })
        #expect(details.contains { $0.hasPrefix("envelope received_at is -9223372036854775808 ms") })
        let out = directory.file("reports")
        let outcome = try ReportJob(settings: .init(formats: [.csv, .json], outputDirectory: out, generatedBy: "t")).run(ledger: ledger)
        #expect(outcome.asOf == IngestFixtures.march2024 + 64_000)
    }

    /// A ledger holding facts at Int64.min / Int64.max (as an older version could write them): `status` and a
    /// report with the default as-of answer, and the report leaves those facts out.
    @Test func aLedgerAlreadyHoldingExtremeTimesStillReports() throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("l.sqlite")
        let ledger = try SQLiteLedger(path: database)
        let lock = try ledger.lockForWriting(.exclusive, timeout: .seconds(5))
        defer { lock.release() }
        try ledger.beginTransaction()
        try ledger.setRulesVersion(RulesVersion.current)
        let record = StoredRecord(dedupKey: "sha256:old", source: .googleSubscriptionV1, outcome: .used,
                                  provenance: Provenance(file: "old.ndjson", position: 1), receivedAt: .max,
                                  payload: PayloadCompressor(dictionary: nil).payload(Array("{}".utf8)),
                                  rulesVersion: RulesVersion.current, bucket: 0, subject: "tok-x", run: "old")
        let facts = [
            Fact(platform: .google, subject: "tok-x", kind: "start", at: .min, observedAt: .max, productId: "premium_monthly"),
            Fact(platform: .google, subject: "tok-x", kind: "state", at: .max, observedAt: .max, ref: "GPA.1",
                 detail: "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=", productId: "premium_monthly", end: .max),
        ]
        _ = try ledger.write([.record(record, facts.map(KeyedFact.init))], dequeuing: [])
        try ledger.commitTransaction()
        let statistics = try ledger.statistics()
        #expect(statistics.firstEventAt == nil && statistics.lastEventAt == nil)
        let out = directory.file("reports")
        let outcome = try ReportJob(settings: .init(asOf: IngestFixtures.march2024, formats: [.csv], outputDirectory: out,
                                                    generatedBy: "t")).run(ledger: ledger)
        #expect(outcome.tables.subscriptionsMonthly.isEmpty)
    }
}
