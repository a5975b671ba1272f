import Testing
@testable import Ledger

@Suite struct SQLiteWriteLockTests {
    @Test func aSecondWriterWaitsThenFailsNamingTheDatabase() throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("ledger.sqlite")
        let first = try SQLiteWriteLock(databasePath: database, timeout: .seconds(1))
        #expect {
            try SQLiteWriteLock(databasePath: database, timeout: .milliseconds(300))
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.kind == .busy
                && error.message == "another ingest or reprocess is writing \(database); wait for it or use another --db"
        }
        first.release()
        let second = try SQLiteWriteLock(databasePath: database, timeout: .milliseconds(300))
        second.release()
    }
}
