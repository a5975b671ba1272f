import Facts
import Foundation
import Ingest

extension PostgresLedger {
    public func fileClaimer() throws(LedgerError) -> any FileClaimer {
        try PostgresFileClaimer(location: postgres)
    }

}

/// Claims files for one ingest among several sharing a PostgreSQL ledger: a file is read by the process that
/// holds its lease (`files.lease_owner` until `lease_until`). A claim takes the file's row with `FOR UPDATE SKIP
/// LOCKED`, so two processes never wait on each other's claim; the lease is renewed every few seconds while the
/// process lives, and one whose process died expires, so that another process takes the file over and reads it
/// again (the records the dead one committed deduplicate). Its own connection, on the reader thread, and one
/// more for the renewals.
final class PostgresFileClaimer: FileClaimer, @unchecked Sendable {
    /// How long a claim holds without renewal (ms): `$SUBLEDGER_LEASE_SECONDS`, else 30 s.
    let leaseMillis: Int64
    private let owner = UUID().uuidString.lowercased()
    private let session: PostgresSession
    private let renewals: PostgresLeaseRenewal

    init(location: PostgresLocation) throws(LedgerError) {
        let seconds = ProcessInfo.processInfo.environment["SUBLEDGER_LEASE_SECONDS"].flatMap { Int64($0) } ?? 30
        leaseMillis = max(1, seconds) * 1000
        session = try PostgresSession(location)
        // A claim never waits long: past 5 s on another process's row lock it fails and the file is read here
        // too (its records deduplicate); and the server ends a claim transaction left open for a minute, so a
        // stuck process cannot hold the others' claims. Without these, two ingests that met on one file could
        // wait for each other for good.
        try session.query("SET lock_timeout = '5s'")
        try session.query("SET idle_in_transaction_session_timeout = '60s'")
        renewals = try PostgresLeaseRenewal(location: location, owner: owner, leaseMillis: leaseMillis)
    }

    func claim(_ file: FileFingerprint) -> FileClaim {
        do {
            return try claimOrThrow(file)
        } catch {
            // The claim could not be made (the server went away): read it; the store side reports the failure
            // when it next writes.
            _ = try? session.query("ROLLBACK")
            return .read
        }
    }

    private func claimOrThrow(_ file: FileFingerprint) throws(LedgerError) -> FileClaim {
        let now = LedgerClock.now()
        if file.size > 0, let original = try session.query(LedgerSchema.copyOf, [
            .text(file.sha256), .integer(file.size), .text(file.path),
        ]).first?.text(0) {
            return .copy(of: original)
        }
        // The row as last committed, read without waiting: a file done or claimed elsewhere is passed over at once.
        // Inserting or locking the row instead waits while another process's store holds it (the store updates
        // the row of the file it writes until its transaction commits, a whole batch later), and a process that
        // waits behind the other's every file never overtakes it: it read nothing in one of five 2-worker runs.
        let committed = try session.query(LedgerSchema.fileClaimState, [.text(file.path)]).first
        if let committed, let decided = try decide(committed, file, now: now) { return decided }
        try session.query("BEGIN")
        let until = now + leaseMillis
        if committed == nil {
            let inserted = try session.query(LedgerSchema.claimNewFile, [
                .text(file.path), .integer(file.size), .text(file.sha256), .integer(now), .text(owner), .integer(until),
            ])
            if !inserted.isEmpty {
                try session.query("COMMIT")
                return .read
            }
        }
        guard let row = try session.query(LedgerSchema.lockFileRow, [.text(file.path)]).first else {
            // Another process is claiming or writing it this very moment.
            try session.query("COMMIT")
            return .claimedElsewhere
        }
        if let decided = try decide(row, file, now: now) {
            try session.query("COMMIT")
            return decided
        }
        try session.query(LedgerSchema.takeLease, [.text(owner), .integer(until), .text(file.path)])
        try session.query("COMMIT")
        return .read
    }

    /// What a file's row (``LedgerSchema/fileClaimState``'s columns) decides: the same bytes done, or a claim of
    /// another process that has not expired; `nil` when this process may take the file.
    private func decide(_ row: PostgresResultRow, _ file: FileFingerprint, now: Int64) throws(LedgerError) -> FileClaim? {
        let size = try row.integer(0)
        let sha256 = try row.text(1)
        let state = try row.text(2)
        let holder = try row.text(3)
        let heldUntil = try row.integer(4) ?? 0
        if state == "done" && size == file.size && sha256 == file.sha256 { return .unchanged }
        if let holder, holder != owner, heldUntil > now { return .claimedElsewhere }
        return nil
    }
}

/// Renews the claims one process holds, from a thread of its own, until the process ends (its claims then
/// expire on their own).
final class PostgresLeaseRenewal: @unchecked Sendable {
    private let session: PostgresSession
    private let owner: String
    private let leaseMillis: Int64

    init(location: PostgresLocation, owner: String, leaseMillis: Int64) throws(LedgerError) {
        session = try PostgresSession(location)
        self.owner = owner
        self.leaseMillis = leaseMillis
        let thread = Thread { [weak self] in
            while let self {
                let interval = useconds_t(self.leaseMillis * 1000 / 4)
                _ = try? self.session.query(LedgerSchema.renewLeases, [
                    .integer(LedgerClock.now() + self.leaseMillis), .text(self.owner),
                ])
                usleep(interval)
            }
        }
        thread.name = "subledger-leases"
        thread.start()
    }
}
