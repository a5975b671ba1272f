import Facts
import Foundation
import Ingest
import Ledger
import Pipeline
import Testing

/// Issue 13, classes 3–5 through the whole ingest: `warnings` (`timestamps_in_seconds`, `message_id_conflicts`,
/// `parts_quarantined`) in the run's statistics, derived from the ledger for `status`, the same for any order
/// of the inputs and unchanged by a re-run.
@Suite(.serialized) struct WarningsTests {
    private func job(_ database: String) throws -> IngestJob {
        IngestJob(ledger: .sqlite(path: database), parser: RecordParser(times: IngestFixtures.times),
                  translator: try IngestFixtures.translator(), progress: .none)
    }

    /// Google's example push (RTDN reference) has messageId 136969346945; fixtures and merged exports reuse it.
    static func push(token: String, type: Int, messageId: String = "136969346945") -> String {
        let rtdn = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"\#(IngestFixtures.march2024 + Int64(type) * 60_000)","subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","subscriptionId":"premium_monthly"}}"#
        return #"{"message":{"attributes":{"key":"value"},"data":"\#(Data(rtdn.utf8).base64EncodedString())","messageId":"\#(messageId)"},"subscription":"projects/myproject/subscriptions/mysubscription"}"#
    }

    /// The resource of token 1 logged with `received_at` in epoch seconds (Python's `time.time()`), then the same
    /// response logged again in milliseconds: one record, read in seconds once.
    static let secondsRecords: [String] = {
        let milliseconds = IngestFixtures.subscription(1)
        let seconds = milliseconds.replacingOccurrences(of: #""received_at":\#(IngestFixtures.march2024 + 60_000 + 4_000)"#,
                                                        with: #""received_at":\#((IngestFixtures.march2024 + 64_000) / 1000)"#)
        return [seconds, milliseconds]
    }()

    /// A V1 notification with one unreadable transaction beside a readable one.
    static let partlyReadable = #"{"notification_type":"DID_RENEW","environment":"PROD","original_transaction_id":"7000","unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[{"product_id":"premium_monthly","transaction_id":"7001","original_transaction_id":"7000","purchase_date_ms":"1709294400000","expires_date_ms":"1711972800000"},{"transaction_id":"7002","original_transaction_id":"7000","purchase_date_ms":"1711972800000"}],"pending_renewal_info":[]}}"#

    @Test func eachWarningIsCountedOnceAndDerivableFromTheLedger() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("mixed.ndjson")
        let lines = Self.secondsRecords + [Self.push(token: "tok-a", type: 4), Self.push(token: "tok-b", type: 4),
                                           Self.push(token: "tok-a", type: 4), Self.partlyReadable]
        try IngestFixtures.write(lines, to: input)
        let database = directory.file("l.sqlite")
        let run = try job(database).run(inputs: [input]).statistics
        #expect(run.read == 6)
        #expect(run.used == 4)
        #expect(run.duplicate == 2, "the resource logged twice, the push redelivered")
        #expect(run.quarantined == 0)
        #expect(run[.timestampsInSeconds] == 1)
        #expect(run[.messageIdConflicts] == 1)
        #expect(run[.partsQuarantined] == 1)
        let ledger = try SQLiteLedger(path: database, access: .readOnly)
        #expect(try ledger.statistics() == run)
        // Seconds read as seconds: the resource is observed 2024-03-01T12:01:04Z, not in January 1970.
        var observed: [Millis] = []
        try ledger.forEachSubscription(buckets: 0...LedgerBucket.count - 1) { _, id, facts in
            if id == "tok-1" { observed = facts.map(\.observedAt) }
        }
        #expect(Set(observed) == [IngestFixtures.march2024 + 64_000])
        // The part is listed in the quarantine under the record's place, with its path.
        var entries: [QuarantinedRecord] = []
        try ledger.forEachQuarantined(reason: nil) { entries.append($0) }
        #expect(entries.map(\.part) == ["unified_receipt.latest_receipt_info[1]"])
        #expect(entries.first?.provenance == Provenance(file: input, position: 6))
        #expect(entries.first?.detail == "unified_receipt.latest_receipt_info[1].product_id of transaction 7002 is missing")

        // A re-run reads nothing new and adds no warning.
        let again = try job(database).run(inputs: [input]).statistics
        #expect(again == IngestStatistics().withEveryWarning())
        #expect(try ledger.statistics() == run)
    }

    /// The conflict count and the parts do not depend on which copy or which message came first, and what each
    /// run says it added (counted from its own records, never by reading the whole ledger) adds up to them.
    @Test func warningsAreTheSameForEveryFileOrder() throws {
        let directory = try TemporaryDirectory()
        let files = ["a.ndjson", "b.ndjson", "c.ndjson"].map(directory.file)
        try IngestFixtures.write([Self.push(token: "tok-a", type: 4), Self.secondsRecords[1]], to: files[0])
        try IngestFixtures.write([Self.push(token: "tok-b", type: 4), Self.partlyReadable, Self.secondsRecords[0]], to: files[1])
        try IngestFixtures.write([Self.partlyReadable, Self.push(token: "tok-c", type: 4)], to: files[2])
        var digests: Set<String> = []
        var warnings: Set<[String: Int]> = []
        for (index, order) in [[0, 1, 2], [2, 1, 0], [1, 2, 0]].enumerated() {
            let database = directory.file("l\(index).sqlite")
            var added: [String: Int] = [:]
            for file in order {
                added.merge(try job(database).run(inputs: [files[file]]).statistics.warnings, uniquingKeysWith: +)
            }
            let ledger = try SQLiteLedger(path: database, access: .readOnly)
            digests.insert(try ledger.contentDigest())
            warnings.insert(try ledger.statistics().warnings)
            #expect(added == (try ledger.statistics().warnings), "order \(order)")
        }
        #expect(digests.count == 1)
        #expect(warnings == [["timestamps_in_seconds": 1, "message_id_conflicts": 2, "parts_quarantined": 1]])
    }

    /// cli.md: every non-zero warning is also said on stderr in a sentence (a log's logfmt `warning` record, as
    /// every line there); `ingest --json` and `status --json` carry the `warnings` object.
    @Test func theCommandLineSaysEachWarning() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(Self.secondsRecords + [Self.push(token: "tok-a", type: 4), Self.push(token: "tok-b", type: 4),
                                                        Self.partlyReadable], to: directory.file("in.ndjson"))
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "in.ndjson"], in: directory, tag: "ingest")
        #expect(ingest.status == 1, "a quarantined part is quarantined input (cli.md: exit 1): \(ingest.stderr)")
        let expected = #""warnings":{"message_id_conflicts":1,"parts_quarantined":1,"timestamps_in_seconds":1}"#
        #expect(ingest.stdout.contains(expected))
        #expect(ingest.stderr.contains(#"level=warning msg="1 records had received_at in epoch seconds"#))
        #expect(ingest.stderr.contains(#"level=warning msg="1 Pub/Sub messages reuse the messageId of another message"#))
        #expect(ingest.stderr.contains(#"level=warning msg="1 unusable parts of otherwise used records were quarantined"#))
        let status = try SubledgerProcess.run(["status", "--db", "l.sqlite", "--json"], in: directory, tag: "status")
        #expect(status.status == 0)
        #expect(status.stdout.contains(expected))
        #expect(status.stderr.contains(#"level=warning msg="1 records had received_at in epoch seconds"#))
        let statusLines = status.stderr.split(separator: "\n")
        #expect(statusLines.allSatisfy { $0.hasPrefix("ts=") }, "status --json: every stderr line a log record: \(status.stderr)")
        let quarantine = try SubledgerProcess.run(["quarantine", "--db", "l.sqlite"], in: directory, tag: "quarantine")
        #expect(quarantine.stdout == "in.ndjson:5 unified_receipt.latest_receipt_info[1]\tinvalid_payload\t"
                + "unified_receipt.latest_receipt_info[1].product_id of transaction 7002 is missing\n")
        #expect(quarantine.stderr.contains("0 quarantined records and 1 quarantined parts of used records"))
    }
}
