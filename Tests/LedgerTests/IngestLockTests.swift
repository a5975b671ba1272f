import Testing
@testable import Ledger

@Suite struct IngestLockTests {
    @Test func aSecondIngestWaitsThenFailsNamingTheDatabase() throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("ledger.sqlite")
        let first = try IngestLock(databasePath: database, timeout: .seconds(1))
        #expect {
            try IngestLock(databasePath: database, timeout: .milliseconds(300))
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.kind == .busy
                && error.message == "another ingest is running on \(database); wait for it or use another --db"
        }
        first.release()
        let second = try IngestLock(databasePath: database, timeout: .milliseconds(300))
        second.release()
    }
}
