import AppStore
import Facts
import Foundation
import Ingest
import PlayStore
@testable import Ledger

/// A fresh directory per test, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "ledger-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A Google fact of the shape the PlayStore translator writes (times: March 2024, ms UTC).
func googleFact(_ subject: String, kind: Fact.Kind = "order", at: Millis = 1_709_294_400_000,
                observedAt: Millis = 1_709_294_405_000, ref: String? = "GPA.3372-1234-5678-90123") -> Fact {
    Fact(platform: .google, subject: subject, kind: kind, at: at, observedAt: observedAt, ref: ref,
         productId: "premium_monthly", end: at + 2_592_000_000, amountMicros: 4_990_000, currency: "EUR")
}

func link(_ newToken: String, continues oldToken: String, at: Millis = 1_711_900_000_000) -> Fact {
    Fact(platform: .google, subject: newToken, kind: .link, at: at, observedAt: at + 3_000, ref: oldToken)
}

func storedRecord(_ key: String, file: String = "a.ndjson", member: String? = nil, position: Int64 = 1,
                  outcome: StoredRecord.Outcome = .used, receivedAt: Millis? = 1_709_294_405_000,
                  payload: [UInt8] = Array(#"{"kind":"androidpublisher#subscriptionPurchase"}"#.utf8),
                  subject: String? = nil, flags: StoredRecord.Flags = [], parts: [QuarantineEntry] = [],
                  source: SourceKind = .googleSubscriptionV1, run: String = "test") -> StoredRecord {
    StoredRecord(dedupKey: key, source: source, outcome: outcome,
                 provenance: Provenance(file: file, member: member, position: position), receivedAt: receivedAt,
                 payload: PayloadCompressor(dictionary: nil).payload(payload), rulesVersion: 1,
                 bucket: LedgerBucket.of(platform: "google", subject: subject ?? key), subject: subject, flags: flags,
                 parts: parts, run: run)
}

/// A quarantine entry for `raw` read at `provenance`, compressed without a dictionary.
func quarantineEntry(_ reason: String, _ detail: String, at provenance: Provenance, raw: [UInt8]) -> QuarantineEntry {
    QuarantineEntry(reason: reason, detail: detail, provenance: provenance,
                    payload: PayloadCompressor(dictionary: nil).payload(raw), rawSize: raw.count,
                    key: QuarantineEntry.key(provenance: provenance, rawBytes: raw), rulesVersion: 1)
}

/// A ledger at `path` opened for writing, its schema brought up to date (under the write lock, released again).
func writableLedger(_ path: String) throws -> SQLiteLedger {
    let ledger = try SQLiteLedger(path: path)
    try ledger.lockForWriting(.exclusive, timeout: .seconds(5)).release()
    return ledger
}

/// Runs `body` inside one committed transaction.
func transaction(_ ledger: SQLiteLedger, _ body: (SQLiteLedger) throws -> Void) throws {
    try ledger.beginTransaction()
    try body(ledger)
    try ledger.commitTransaction()
}

/// Every subscription group as (platform, id, its facts in order), sorted by platform and id (the ledger hands
/// subscriptions over in no particular order).
func groups(_ ledger: SQLiteLedger) throws -> [(Platform, String, [Fact])] {
    var result: [(Platform, String, [Fact])] = []
    try ledger.forEachSubscription(buckets: 0...LedgerBucket.count - 1) { platform, id, facts in
        result.append((platform, id, facts))
    }
    return result.sorted { ($0.0.rawValue, $0.1) < ($1.0.rawValue, $1.1) }
}

extension SQLiteLedger {
    /// ``store(_:keyedFacts:)`` computing the facts' keys here.
    func store(_ record: StoredRecord, facts: [Fact]) throws -> Bool {
        try store(record, keyedFacts: facts.map(KeyedFact.init))
    }
}
