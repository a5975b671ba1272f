import AppStore
import Facts
import Foundation
import Ingest
import PlayStore
import Testing
@testable import Ledger

/// Issue 18.5: a damaged ledger must never give numbers with exit 0. `quickCheck` runs when ingest and report
/// open the ledger; `verify` is `status --verify`.
@Suite struct LedgerCheckTests {
    /// The payload kinds of both stores, as `status --verify` passes them.
    let knownSources = Set(AppStorePayloads().sources + PlayStorePayloads().sources)

    /// A small ledger: one file with two used records, one excluded, one quarantined, and their facts.
    func ledger(in directory: TemporaryDirectory) throws -> SQLiteLedger {
        let ledger = try writableLedger(directory.file("ledger.sqlite"))
        try transaction(ledger) { ledger in
            let file = FileFingerprint(path: "a.ndjson", size: 100, sha256: String(repeating: "ab", count: 32))
            try ledger.beginFile(file)
            _ = try ledger.store(storedRecord("sha256:1", position: 1), facts: [googleFact("tok-1")])
            _ = try ledger.store(storedRecord("sha256:2", position: 2), facts: [googleFact("tok-2"), link("tok-2", continues: "tok-1")])
            _ = try ledger.store(storedRecord("sha256:3", position: 3, outcome: .excluded(.sandbox)), facts: [])
            _ = try ledger.quarantine(quarantineEntry("malformed_json", "x", at: Provenance(file: "a.ndjson", position: 4),
                                                      raw: Array("oops".utf8)))
            try ledger.finishFile(file, counts: FileCounts(read: 4, used: 2, duplicate: 0, excluded: 1, quarantined: 1), damage: nil)
        }
        return ledger
    }

    @Test func aSoundLedgerPassesBothChecks() throws {
        let directory = try TemporaryDirectory()
        let ledger = try ledger(in: directory)
        try ledger.quickCheck()
        #expect(try ledger.verify(sources: knownSources) == [])
        let readOnly = try SQLiteLedger(path: directory.file("ledger.sqlite"), access: .readOnly)
        try readOnly.quickCheck()
        #expect(try readOnly.verify(sources: knownSources) == [])
    }

    /// A changed byte inside a fact leaves every page well formed: only its key tells.
    @Test func aFactWhoseContentChangedIsFound() throws {
        let directory = try TemporaryDirectory()
        let ledger = try ledger(in: directory)
        try ledger.sqlite.execute("UPDATE facts SET at = at + 1 WHERE subject = 'tok-2' AND kind = 'order'")
        try ledger.quickCheck()
        #expect(try ledger.verify(sources: knownSources) == ["1 fact(s) do not match their key: their content changed after they were written"])
    }

    @Test func brokenInvariantsAreNamed() throws {
        let directory = try TemporaryDirectory()
        let ledger = try ledger(in: directory)
        try ledger.sqlite.execute("UPDATE files SET used = 3")
        try ledger.sqlite.execute("UPDATE records SET file = 'elsewhere.ndjson' WHERE dedup_key = 'sha256:1'")
        try ledger.sqlite.execute("UPDATE records SET source = 'google.subscription.v9' WHERE dedup_key = 'sha256:2'")
        try ledger.sqlite.execute("UPDATE quarantine SET reason = 'malformed_jsom'")
        #expect(try ledger.verify(sources: knownSources) == [
            "1 row(s) break the rule: a file read to its end has counts that add up (read = used + duplicate + excluded + quarantined)",
            "1 row(s) break the rule: every record comes from a file in the manifest",
            "records have the unknown source \"google.subscription.v9\"",
            "records are quarantined for the unknown reason \"malformed_jsom\"",
        ])
    }

    /// A page whose header is overwritten (here the `records` table's root page) is found by SQLite's quick check
    /// at open, read-only too, and any statement that meets it says the ledger is damaged.
    @Test func aBrokenPageStopsTheQuickCheck() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("ledger.sqlite")
        let root: Int
        do {
            let ledger = try ledger(in: directory)
            let statement = try ledger.sqlite.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'records'")
            #expect(try statement.step())
            root = Int(statement.int64(0))
        }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        for i in 0..<8 { bytes[(root - 1) * pageSize + i] = 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let reopened = try SQLiteLedger(path: path, access: .readOnly)
        #expect {
            try reopened.quickCheck()
        } throws: { error in
            guard let error = error as? LedgerError, error.kind == .damaged else { return false }
            // SQLite's check either lists the broken page or fails on it; its own words are the detail, for the
            // log, and the message says what happened and what to do.
            return (error.message.hasPrefix("the ledger is damaged (the database's own check of its file found")
                    || error.message.hasPrefix("the ledger is damaged (a page of its file is unreadable)"))
                && error.detail?.contains("SQLite") == true && !error.message.contains("SQLite")
                && error.message.hasSuffix("move \(path) aside and run `subledger ingest` on all of them with a new --db")
        }
        #expect {
            _ = try reopened.statistics()
        } throws: { error in
            (error as? LedgerError)?.kind == .damaged
        }
    }
}
