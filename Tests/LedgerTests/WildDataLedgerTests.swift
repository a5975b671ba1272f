import AppStore
import Facts
import Foundation
import Ingest
import PlayStore
import Testing
@testable import Ledger

/// What the ledger derives for issue 13 (test tokens' records, warnings, parts) and keeps safe for issue 18 (a
/// ledger holding extreme times still answers `status` and renders them).
@Suite struct WildDataLedgerTests {
    private func marker(_ token: String) -> Fact {
        Fact(platform: .google, subject: token, kind: .testPurchase, at: 1_709_294_400_000, observedAt: 1_709_294_420_000)
    }

    private func record(_ key: String, source: SourceKind = .googleRTDN, subject: String?, position: Int64,
                        outcome: StoredRecord.Outcome = .used, flags: StoredRecord.Flags = [],
                        parts: [QuarantineEntry] = [], run: String = "first") -> StoredRecord {
        storedRecord(key, position: position, outcome: outcome, subject: subject, flags: flags, parts: parts,
                     source: source, run: run)
    }

    @Test func aTestTokensRecordsCountAsExcludedWhicheverCameFirst() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("l.sqlite"))
        try transaction(ledger) { ledger in
            _ = try ledger.store(record("msg:1:aa", subject: "tester", position: 1), facts: [googleFact("tester", kind: "event")])
            _ = try ledger.store(record("msg:2:bb", subject: "payer", position: 2), facts: [googleFact("payer", kind: "event")])
        }
        #expect(try ledger.recordOutcomes(run: nil).used == 2)
        try transaction(ledger) { ledger in
            _ = try ledger.store(record("sha256:cc", source: .googleProductV1, subject: "tester", position: 3,
                                        outcome: .excluded(.test), run: "second"), facts: [marker("tester")])
            // An Apple subject of the same text is another platform's: not marked.
            _ = try ledger.store(record("sha256:dd", source: .appleVerifyReceipt, subject: "tester", position: 4, run: "second"),
                                 facts: [Fact(platform: .apple, subject: "tester", kind: "period", at: 1_709_294_400_000,
                                              observedAt: 1_709_294_400_000)])
        }
        let all = try ledger.recordOutcomes(run: nil)
        #expect(all.used == 2 && all.excludedByReason == ["test": 2])
        #expect(all.bySource == [SourceCount(source: "apple.verify_receipt", used: 1, excluded: 0),
                                 SourceCount(source: "google.product.v1", used: 0, excluded: 1),
                                 SourceCount(source: "google.rtdn", used: 1, excluded: 1)])
        // The second run's: the two records it stored.
        let later = try ledger.recordOutcomes(run: "second")
        #expect(later.used == 1 && later.excludedByReason == ["test": 1])
        #expect(try ledger.statistics().excludedByReason == ["test": 2])
    }

    @Test func flagsAreOredOverCopiesAndPartsTakeTheSmallestProvenance() throws {
        let part = QuarantinedPart(path: "latest_receipt_info[1]", reason: .invalidPayload,
                                   detail: "latest_receipt_info[1].product_id is missing", raw: Array(#"{"transaction_id":"7"}"#.utf8))
        func copy(at position: Int64, flags: StoredRecord.Flags) -> StoredRecord {
            let provenance = Provenance(file: "a.ndjson", position: position)
            let entry = QuarantineEntry(part: part, record: "sha256:ee", provenance: provenance,
                                        payload: PayloadCompressor(dictionary: nil).payload(part.raw), rulesVersion: 1)
            return storedRecord("sha256:ee", position: position, flags: flags, parts: [entry], source: .appleVerifyReceipt)
        }
        var digests: Set<String> = []
        for (index, order) in [[Int64(9), 4], [4, 9]].enumerated() {
            let directory = try TemporaryDirectory()
            let ledger = try writableLedger(directory.file("l\(index).sqlite"))
            try transaction(ledger) { ledger in
                for position in order {
                    _ = try ledger.store(copy(at: position, flags: position == 9 ? .receivedAtInSeconds : []), facts: [])
                }
            }
            digests.insert(try ledger.contentDigest())
            #expect(try ledger.statistics().warnings == ["timestamps_in_seconds": 1, "message_id_conflicts": 0, "parts_quarantined": 1])
            var entries: [QuarantinedRecord] = []
            try ledger.forEachQuarantined(reason: "invalid_payload") { entries.append($0) }
            #expect(entries.map(\.provenance.position) == [4])
            #expect(entries.map(\.part) == ["latest_receipt_info[1]"])
            let statistics = try ledger.statistics()
            #expect(statistics.quarantined == 0 && statistics.used == 1 && statistics.quarantinedByReason.isEmpty)
        }
        #expect(digests.count == 1)
    }

    @Test func messageIdConflictsCountMessagesBeyondTheFirstOfEachId() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("l.sqlite"))
        let hex = { (c: Character) in String(repeating: c, count: 64) }
        try transaction(ledger) { ledger in
            for (position, key) in ["msg:136969346945:" + hex("a"), "msg:136969346945:" + hex("b"), "msg:136969346945:" + hex("c"),
                                    "msg:7:" + hex("a"), "msg:136969346946:" + hex("a"), "sha256:" + hex("d")].enumerated() {
                _ = try ledger.store(record(key, subject: nil, position: Int64(position)), facts: [])
            }
        }
        #expect(try ledger.statistics().warnings["message_id_conflicts"] == 2)
    }

    /// An ingest counts the conflicts its own records add (through its run, never the whole ledger), and runs
    /// one after another add up to the ledger's count; an id that only starts with another id and a colon is
    /// another id.
    @Test func eachRunCountsTheMessageIdConflictsItAdds() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("l.sqlite"))
        let hex = { (c: Character) in String(repeating: c, count: 64) }
        let runs: [(run: String, keys: [String])] = [
            ("first", ["msg:7:" + hex("a"), "msg:a:B:" + hex("a"), "msg:9:" + hex("a"), "msg:9:" + hex("b")]),
            ("second", ["msg:7:" + hex("b"), "msg:a:" + hex("a"), "msg:9:" + hex("c"), "msg:8:" + hex("a"), "msg:8:" + hex("b")]),
        ]
        var added: [Int] = []
        var position: Int64 = 0
        for (run, keys) in runs {
            try transaction(ledger) { ledger in
                for key in keys {
                    position += 1
                    _ = try ledger.store(record(key, subject: nil, position: position, run: run), facts: [])
                }
            }
            added.append(try ledger.recordOutcomes(run: run).messageIdConflicts)
        }
        // first: 9:b after 9:a. second: 7:b (7:a earlier), 9:c (9:a, 9:b earlier), 8:b after 8:a; `a` is not `a:B`.
        #expect(added == [1, 3])
        #expect(try ledger.statistics().warnings["message_id_conflicts"] == 4)
    }

    /// A run's conflicts are searched through each message's own key range, so their count grows with the run's
    /// messages, not with their square. A constant range on the key as well made SQLite scan every message key
    /// of the ledger for each message (SQLite takes one range per index column): about 13 s for the 5,000 messages
    /// here, 51 s for 10,000. The bound is that complexity, not a benchmark: the linear search takes milliseconds.
    @Test func aRunsConflictsAreFoundThroughEachMessagesOwnKeys() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("l.sqlite"))
        func key(_ id: Int, _ copy: Int) -> String {
            let hex = String(copy, radix: 16)
            return "msg:\(4_000_000_000_000_000 + id):" + String(repeating: "0", count: 64 - hex.count) + hex
        }
        try transaction(ledger) { ledger in
            for id in 0..<5_000 {
                _ = try ledger.store(record(key(id, 0), subject: nil, position: Int64(id), run: "night"), facts: [])
                // Every 500th id twice, with other data.
                if id % 500 == 0 {
                    _ = try ledger.store(record(key(id, 1), subject: nil, position: Int64(id), run: "night"), facts: [])
                }
            }
        }
        let started = ContinuousClock.now
        let conflicts = try ledger.recordOutcomes(run: "night").messageIdConflicts
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(conflicts == 10)
    }

    /// Issue 18: a ledger written before times were checked may hold an instant at the edge of Int64. `status`
    /// must still answer (its event range is the reports' window), and the instant must still render.
    @Test func extremeInstantsInALedgerDoNotTrap() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("l.sqlite"))
        try transaction(ledger) { ledger in
            _ = try ledger.store(record("sha256:ff", source: .googleSubscriptionV1, subject: "t", position: 1), facts: [
                Fact(platform: .google, subject: "t", kind: "start", at: .min, observedAt: .max),
                googleFact("t", kind: "event"),
            ])
        }
        let statistics = try ledger.statistics()
        #expect(statistics.firstEventAt == 1_709_294_400_000)
        #expect(statistics.lastEventAt == 1_709_294_405_000)
        #expect(Timestamp.rfc3339(.min) == "-292275055-05-16T16:47:04.192Z")
        #expect(Timestamp.rfc3339(.max) == "292278994-08-17T07:12:55.807Z")
        #expect(Timestamp.rfc3339(-1) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(PlausibleTimes.representable.latest) == "9999-12-31T23:59:59.999Z")
    }

    @Test func monthArithmeticClampsAndNeverTraps() {
        #expect(Timestamp.addingMonths(1, to: 1_706_702_400_000) == 1_709_208_000_000)  // 2024-01-31T12:00Z → 02-29
        #expect(Timestamp.addingMonths(-1, to: 1_711_886_400_000) == 1_709_208_000_000)  // 2024-03-31T12:00Z → 02-29
        #expect(Timestamp.addingMonths(-13, to: 1_709_294_400_000) == 1_675_252_800_000)  // 2024-03-01 → 2023-02-01
        #expect(Timestamp.addingMonths(1, to: .max) == nil)
        #expect(Timestamp.addingMonths(.min, to: 0) == nil)
        #expect(Timestamp.addingMonths(-1, to: .min) == nil)
    }
}
