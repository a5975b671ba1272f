import Facts
import Foundation
import Ingest
import Ledger
import Testing

/// The reprocess queue on both engines, through the one ledger interface. A reprocess queues records by key and
/// leaves their payloads in their old rows; the ledger must still end as if every old row had been deleted when
/// the reprocess began: another copy of a queued key written first is new (the old row's payload moves to the
/// queue, which still hands it out), the queued record is then a duplicate that keeps the smallest provenance and
/// the copy received first, and a queued record now quarantined leaves no row behind.
@Suite struct ReprocessQueueTests {
    static let old = Array(#"{"copy":"old"}"#.utf8)
    static let new = Array(#"{"copy":"new"}"#.utf8)
    static let other = Array(#"{"copy":"other"}"#.utf8)

    @Test(arguments: ["sqlite", "postgres"])
    func queuedRecordsAreWrittenAsIfTheirOldRowsWereGone(engine: String) throws {
        let workspace = try TemporaryDirectory()
        let location: String
        if engine == "postgres" {
            guard PostgresTestServer.isAvailable else { return }
            location = try PostgresLedgerTests.server().database("queue")
        } else {
            location = workspace.file("queue.sqlite")
        }
        let ledger = try LedgerLocation(location).open(.readWrite)
        let lock = try ledger.lockForWriting(.exclusive, timeout: .seconds(10))
        defer { lock.release() }
        func write(_ writes: [LedgerWrite], dequeuing: [QueuedRecord.ID] = []) throws -> [Bool] {
            try ledger.beginTransaction()
            let isNew = try ledger.write(writes, dequeuing: dequeuing)
            try ledger.commitTransaction()
            return isNew
        }
        let decompressor = PayloadDecompressor(dictionaries: [])
        func queued() throws -> [String: String] {
            var payloads: [String: String] = [:]
            for record in try ledger.queueReader().page(after: nil, limit: 10) {
                payloads[record.id.key] = decompressor.bytes(of: record.payload).map { String(decoding: $0, as: UTF8.self) }
            }
            return payloads
        }

        #expect(try write([Self.record("uuid:k1", file: "b.ndjson", position: 5, receivedAt: 1_709_294_405_000, payload: Self.old),
                           Self.record("uuid:k2", file: "b.ndjson", position: 6, receivedAt: 1_709_294_405_000, payload: Self.other),
                           Self.record("uuid:k3", file: "d.ndjson", position: 9, receivedAt: 1_709_294_405_000, payload: Self.other)])
                == [true, true, true])
        #expect(try ledger.queueForReprocess(.full).isEmpty)
        #expect(try queued() == ["uuid:k1": #"{"copy":"old"}"#, "uuid:k2": #"{"copy":"other"}"#,
                                 "uuid:k3": #"{"copy":"other"}"#])

        // The queued k3 is written again (over its old row), then a copy read at a smaller place: a duplicate.
        #expect(try write([Self.record("uuid:k3", file: "d.ndjson", position: 9, receivedAt: 1_709_294_405_000, payload: Self.other),
                           Self.record("uuid:k3", file: "a.ndjson", position: 2, receivedAt: 1_709_294_405_000, payload: Self.other)],
                          dequeuing: [.init(origin: .record, key: "uuid:k3")])
                == [true, false])
        #expect(try ledger.records(matching: "uuid:k3").map(\.provenance) == [Provenance(file: "a.ndjson", member: nil, position: 2)])

        // A later copy of k1 from another file comes first (a file read again, a released quarantined copy).
        #expect(try write([Self.record("uuid:k1", file: "c.ndjson", position: 1, receivedAt: 1_709_294_409_000, payload: Self.new)])
                == [true])
        #expect(try queued()["uuid:k1"] == #"{"copy":"old"}"#)

        // Then the queued k1 itself, and k2, which the new rules quarantine.
        let raw = Array("{}".utf8)
        let place = Provenance(file: "b.ndjson", member: nil, position: 6)
        let bad = QuarantineEntry(reason: "bad_signature", detail: "forged", provenance: place,
                                  payload: PayloadCompressor(dictionary: nil).payload(raw), rawSize: raw.count,
                                  key: QuarantineEntry.key(provenance: place, rawBytes: raw), rulesVersion: 1)
        #expect(try write([Self.record("uuid:k1", file: "b.ndjson", position: 5, receivedAt: 1_709_294_405_000, payload: Self.old),
                           .quarantine(bad)],
                          dequeuing: [.init(origin: .record, key: "uuid:k1"), .init(origin: .record, key: "uuid:k2")])
                == [false, true])
        #expect(try queued().isEmpty)
        try ledger.finishReprocess(rulesVersion: 1)

        let k1 = try ledger.records(matching: "uuid:k1")
        #expect(k1.count == 1)
        #expect(k1.first?.provenance == Provenance(file: "b.ndjson", member: nil, position: 5))
        #expect(k1.first?.receivedAt == 1_709_294_405_000)
        #expect(k1.first?.raw == Self.old)
        #expect(try ledger.records(matching: "uuid:k2").isEmpty)
        #expect(try ledger.statistics().quarantined == 1)
    }

    /// A used Google record with one fact (times: March 2024, ms UTC).
    static func record(_ key: String, file: String, position: Int64, receivedAt: Millis, payload: [UInt8]) -> LedgerWrite {
        let fact = Fact(platform: .google, subject: "tok-" + key, kind: "order", at: 1_709_294_400_000,
                        observedAt: receivedAt, ref: "GPA.3372-1234-5678-90123", productId: "premium_monthly",
                        end: 1_711_886_400_000, amountMicros: 4_990_000, currency: "EUR")
        let keyed = KeyedFact(fact)
        let record = StoredRecord(dedupKey: key, source: .googleSubscriptionV1, outcome: .used,
                                  provenance: Provenance(file: file, member: nil, position: position),
                                  receivedAt: receivedAt, payload: PayloadCompressor(dictionary: nil).payload(payload),
                                  rulesVersion: 1, bucket: keyed.bucket, subject: fact.subject, flags: [], parts: [],
                                  run: "test")
        return .record(record, [keyed])
    }
}
