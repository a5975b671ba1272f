import Facts
import Ingest
import Testing
@testable import Ledger

/// Provenance both ways: a fact names the record that stated it first, a record lists the facts it stated first,
/// whatever the order of ingest.
@Suite struct ProvenanceTests {
    @Test func aFactNamesTheRecordThatStatedItFirstInEveryOrder() throws {
        let directory = try TemporaryDirectory()
        let early = storedRecord("sha256:bb", file: "b.ndjson", position: 4,
                                 payload: Array(#"{"kind":"androidpublisher#subscriptionPurchase","n":1}"#.utf8))
        let late = storedRecord("sha256:aa", file: "a.ndjson", position: 2)
        for (index, order) in [[0, 1], [1, 0]].enumerated() {
            let ledger = try writableLedger(directory.file("p\(index).sqlite"))
            try transaction(ledger) { (ledger: SQLiteLedger) throws in
                for step in order {
                    if step == 0 {
                        _ = try ledger.store(early, facts: [googleFact("tok", observedAt: 1_709_294_405_000)])
                    } else {
                        _ = try ledger.store(late, facts: [googleFact("tok", observedAt: 1_709_294_409_000),
                                                           googleFact("tok", kind: "cancel", observedAt: 1_709_294_409_000)])
                    }
                }
            }
            let facts = try ledger.facts(ofSubject: "tok")
            #expect(facts.map(\.record) == ["sha256:aa", "sha256:bb"], "cancel (only in aa), then order (first in bb)")
            let byKey = try ledger.records(matching: "sha256:bb")
            #expect(byKey.map(\.provenance.description) == ["b.ndjson:4"])
            #expect(byKey.first?.raw == Array(#"{"kind":"androidpublisher#subscriptionPurchase","n":1}"#.utf8))
            #expect(byKey.first?.facts.map(\.kind) == ["order"])
            let byPlace = try ledger.records(matching: "a.ndjson:2")
            #expect(byPlace.map(\.dedupKey) == ["sha256:aa"])
            #expect(byPlace.first?.facts.map(\.kind) == ["cancel"])
            #expect(try ledger.records(matching: "c.ndjson:1").isEmpty)
        }
    }

    @Test func placesAndKeysAreToldApart() {
        #expect(Provenance(reference: "archives/x.tar.gz[2024/03.ndjson]:17")
                == Provenance(file: "archives/x.tar.gz", member: "2024/03.ndjson", position: 17))
        #expect(Provenance(reference: "C:/logs/a.ndjson:3") == Provenance(file: "C:/logs/a.ndjson", position: 3))
        #expect(Provenance(reference: "sha256:4fb83f61") == nil)
    }
}
