import Foundation
@testable import Ledger
import Testing

/// A schema step may run on one engine only (``LedgerMigration/engines``): the other records it as applied and
/// changes nothing, so both ledgers list the same steps.
@Suite struct EngineMigrationTests {
    /// `009-sqlite-queue-in-stored-order` drops the queue's provenance index on SQLite, which reads its queue in
    /// stored order; PostgreSQL reads by provenance and keeps it.
    @Test(arguments: ["sqlite", "postgres"])
    func aStepOfOneEngineIsRecordedByBothAndRunByItsOwn(engine: String) async throws {
        if engine == "postgres" && !PostgresTestServer.isAvailable { return }
        let workspace = try TemporaryDirectory()
        let location = engine == "postgres" ? try PostgresLedgerTests.server().database("steps") : workspace.file("steps.sqlite")
        let indexQuery = engine == "postgres"
            ? "SELECT indexname::text FROM pg_indexes WHERE tablename = 'reprocess_queue' AND indexname LIKE '%provenance%'"
            : "SELECT name FROM sqlite_schema WHERE tbl_name = 'reprocess_queue' AND name LIKE '%provenance%'"
        // A ledger blocks its thread on every call (PostgreSQL): never a thread of the cooperative pool.
        let (indexes, steps) = try await ReprocessQueueTests.onOwnThread { () throws -> ([String], [String]) in
            let store = try LedgerLocation(location).open(.readWrite)
            try store.lockForWriting(.exclusive, timeout: .seconds(30)).release()
            guard let ledger = store as? any SQLLedger else {
                throw LedgerError(kind: .foreign, path: location, message: "both engines are SQL ledgers")
            }
            return (try ledger.strings(indexQuery),
                    try ledger.strings("SELECT name FROM migrations ORDER BY name"))
        }
        #expect(steps == LedgerMigrations.all.map(\.name))
        #expect(indexes == (engine == "postgres" ? ["reprocess_queue_by_provenance"] : []))
    }
}
