import Testing
@testable import Ledger

@Suite struct PostgresCopiesTests {
    /// A batch's keys with a copy to merge: those staged twice and those the ledger had already (not inserted),
    /// each once, in the order first met; a key staged once and inserted has none.
    @Test func onlyKeysStagedTwiceOrAlreadyStoredHaveCopies() {
        let keys = ["msg:1", "msg:2", "msg:3", "msg:2", "msg:4", "msg:2", "msg:5"]
        let inserted: Set<String> = ["msg:1", "msg:2", "msg:4"]
        #expect(PostgresStaging.keysWithCopies(keys, inserted: inserted) == ["msg:3", "msg:2", "msg:5"])
        #expect(PostgresStaging.keysWithCopies(["a", "b"], inserted: ["a", "b"]).isEmpty)
    }
}
