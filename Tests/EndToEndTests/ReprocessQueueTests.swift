import Facts
import Foundation
import Ingest
import Ledger
import Testing

/// The reprocess queue on both engines, through the one ledger interface. A reprocess queues references to
/// records (PostgreSQL their keys, SQLite their rowids) and leaves their payloads in their old rows; the ledger
/// must still end as if every old row had been deleted when the reprocess began: another copy of a queued key
/// written first is new (the old row's payload moves aside, to the queue row or SQLite's stash, and the queue
/// still hands it out), the queued record is then a duplicate that keeps the smallest provenance and the copy
/// received first, and a queued record now quarantined leaves no row behind.
@Suite struct ReprocessQueueTests {
    static let old = Array(#"{"copy":"old"}"#.utf8)
    static let new = Array(#"{"copy":"new"}"#.utf8)
    static let other = Array(#"{"copy":"other"}"#.utf8)

    @Test(arguments: ["sqlite", "postgres"])
    func queuedRecordsAreWrittenAsIfTheirOldRowsWereGone(engine: String) async throws {
        guard let seen = try await Steps.run(engine: engine, { try Self.reprocessSteps($0) }) else { return }
        #expect(seen == [
            "stored: [true, true, true]", "files to read again: []",
            #"queued: [("uuid:k1", "{\"copy\":\"old\"}"), ("uuid:k2", "{\"copy\":\"other\"}"), ("uuid:k3", "{\"copy\":\"other\"}")]"#,
            // The queued k3 is written again (over its old row), then a copy read at a smaller place: a duplicate.
            "k3 and its copy: [true, false]", "k3 at: a.ndjson:2",
            // A later copy of k1 from another file comes first (a file read again, a released quarantined copy):
            // new, and the queue still hands out k1's old payload.
            "k1's later copy: [true]", #"queued: [("uuid:k1", "{\"copy\":\"old\"}"), ("uuid:k2", "{\"copy\":\"other\"}")]"#,
            // Then the queued k1 itself (a duplicate now) and k2, which the new rules quarantine.
            "k1 and k2 quarantined: [false, true]", "queued: []",
            #"k1: b.ndjson:5 at 1709294405000: {"copy":"old"}"#, "k2: 0 rows", "quarantined: 1",
        ])
    }

    /// New rules give a queued record the key of another queued record, in a transaction of its own: it takes
    /// that key's row, whose old payload the queue still hands out, and the other record is then its duplicate.
    @Test(arguments: ["sqlite", "postgres"])
    func aRecordGivenAnotherQueuedRecordsKeyTakesItsRow(engine: String) async throws {
        guard let seen = try await Steps.run(engine: engine, { steps in
            var seen: [String] = []
            _ = try steps.write([Self.record("uuid:a", file: "x.ndjson", position: 1, payload: Self.old),
                                 Self.record("uuid:b", file: "x.ndjson", position: 2, payload: Self.other)])
            _ = try steps.ledger.queueForReprocess(.full)
            let rekeyed = try steps.write([Self.record("uuid:b", file: "x.ndjson", position: 1, payload: Self.old)],
                                          dequeuing: [.init(origin: .record, key: "uuid:a")])
            seen.append("a as b: \(rekeyed)")
            seen.append(try steps.queued())
            let b = try steps.write([Self.record("uuid:b", file: "x.ndjson", position: 2, payload: Self.other)],
                                    dequeuing: [.init(origin: .record, key: "uuid:b")])
            seen.append("b: \(b)")
            seen.append(try steps.queued())
            try steps.ledger.finishReprocess(rulesVersion: 1)
            for key in ["uuid:a", "uuid:b"] {
                let rows = try steps.ledger.records(matching: key).map { "\($0.provenance) \(steps.text($0.raw))" }
                seen.append("\(key): \(rows)")
            }
            return seen
        }) else { return }
        #expect(seen == [
            "a as b: [true]", #"queued: [("uuid:b", "{\"copy\":\"other\"}")]"#,
            "b: [false]", "queued: []",
            "uuid:a: []", #"uuid:b: ["x.ndjson:1 {\"copy\":\"old\"}"]"#,
        ])
    }

    /// A ledger of either engine, opened for writing and locked, and the calls the steps of a test make on it.
    struct Steps {
        let ledger: any LedgerStore
        let decompressor = PayloadDecompressor(dictionaries: [])

        /// Runs `body` on a new ledger of `engine`; `nil` when that engine's test server is not available.
        static func run(engine: String, _ body: @escaping @Sendable (Steps) throws -> [String]) async throws -> [String]? {
            if engine == "postgres" && !PostgresTestServer.isAvailable { return nil }
            let workspace = try TemporaryDirectory()
            let location = engine == "postgres" ? try PostgresLedgerTests.server().database("queue") : workspace.file("queue.sqlite")
            // The ledger blocks its thread on every call (a PostgreSQL session waits for its event loop): never a
            // thread of the cooperative pool the tests run on, or two such tests at once starve each other.
            return try await ReprocessQueueTests.onOwnThread {
                let ledger = try LedgerLocation(location).open(.readWrite)
                let lock = try ledger.lockForWriting(.exclusive, timeout: .seconds(10))
                defer { lock.release() }
                return try body(Steps(ledger: ledger))
            }
        }

        /// Writes in a transaction of its own.
        func write(_ writes: [LedgerWrite], dequeuing: [QueuedRecord.ID] = []) throws -> [Bool] {
            try ledger.beginTransaction()
            let isNew = try ledger.write(writes, dequeuing: dequeuing)
            try ledger.commitTransaction()
            return isNew
        }

        func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "nil" }

        /// What a new reader of the queue hands out first: keys and payloads, by key.
        func queued() throws -> String {
            let page = try ledger.queueReader().nextPage(limit: 10)
            return "queued: \(page.map { ($0.id.key, text(decompressor.bytes(of: $0.payload))) }.sorted { $0.0 < $1.0 })"
        }
    }

    /// Runs the steps of the first test and says what each one gave.
    static func reprocessSteps(_ steps: Steps) throws -> [String] {
        let ledger = steps.ledger
        var seen: [String] = []
        let stored = try steps.write([Self.record("uuid:k1", file: "b.ndjson", position: 5, payload: Self.old),
                                      Self.record("uuid:k2", file: "b.ndjson", position: 6, payload: Self.other),
                                      Self.record("uuid:k3", file: "d.ndjson", position: 9, payload: Self.other)])
        seen.append("stored: \(stored)")
        seen.append("files to read again: \(try ledger.queueForReprocess(.full))")
        seen.append(try steps.queued())

        let k3 = try steps.write([Self.record("uuid:k3", file: "d.ndjson", position: 9, payload: Self.other),
                                  Self.record("uuid:k3", file: "a.ndjson", position: 2, payload: Self.other)],
                                 dequeuing: [.init(origin: .record, key: "uuid:k3")])
        seen.append("k3 and its copy: \(k3)")
        seen.append("k3 at: \(try ledger.records(matching: "uuid:k3").map(\.provenance.description).joined(separator: ", "))")

        let later = try steps.write([Self.record("uuid:k1", file: "c.ndjson", position: 1, receivedAt: 1_709_294_409_000,
                                                 payload: Self.new)])
        seen.append("k1's later copy: \(later)")
        seen.append(try steps.queued())

        let raw = Array("{}".utf8)
        let place = Provenance(file: "b.ndjson", member: nil, position: 6)
        let bad = QuarantineEntry(reason: "bad_signature", detail: "forged", provenance: place,
                                  payload: PayloadCompressor(dictionary: nil).payload(raw), rawSize: raw.count,
                                  key: QuarantineEntry.key(provenance: place, rawBytes: raw), rulesVersion: 1)
        let last = try steps.write([Self.record("uuid:k1", file: "b.ndjson", position: 5, payload: Self.old), .quarantine(bad)],
                                   dequeuing: [.init(origin: .record, key: "uuid:k1"), .init(origin: .record, key: "uuid:k2")])
        seen.append("k1 and k2 quarantined: \(last)")
        seen.append(try steps.queued())
        try ledger.finishReprocess(rulesVersion: 1)

        let k1 = try ledger.records(matching: "uuid:k1").map { "\($0.provenance) at \($0.receivedAt ?? 0): \(steps.text($0.raw))" }
        seen.append("k1: \(k1.joined(separator: ", "))")
        seen.append("k2: \(try ledger.records(matching: "uuid:k2").count) rows")
        seen.append("quarantined: \(try ledger.statistics().quarantined)")
        return seen
    }

    /// Runs `body` on a thread of its own, leaving the caller's cooperative thread free meanwhile.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// A used Google record with one fact (times: March 2024, ms UTC).
    static func record(_ key: String, file: String, position: Int64, receivedAt: Millis = 1_709_294_405_000,
                       payload: [UInt8]) -> LedgerWrite {
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
