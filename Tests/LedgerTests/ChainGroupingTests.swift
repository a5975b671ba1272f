import Facts
import Testing
@testable import Ledger

@Suite struct ChainGroupingTests {
    @Test func aChainIsGroupedUnderItsFirstTokenEvenWhenTheNewerTokenArrivesFirst() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("c.sqlite"))
        let march: Millis = 1_709_294_400_000
        let april: Millis = 1_711_972_800_000
        let may: Millis = 1_714_564_800_000
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            // Newest first: token-3 (upgrade of token-2, itself an upgrade of token-1).
            _ = try ledger.store(storedRecord("msg:3"), facts: [googleFact("token-3", at: may), link("token-3", continues: "token-2", at: may)])
            _ = try ledger.store(storedRecord("msg:2"), facts: [googleFact("token-2", at: april), link("token-2", continues: "token-1", at: april)])
            _ = try ledger.store(storedRecord("msg:1"), facts: [googleFact("token-1", at: march)])
            _ = try ledger.store(storedRecord("msg:9"), facts: [googleFact("other", at: march)])
            _ = try ledger.store(storedRecord("apple"), facts: [Fact(platform: .apple, subject: "2000000123456789",
                                                                     kind: "transaction", at: march, observedAt: march)])
        }
        // Reports open the ledger read-only; the scan's TEMP table must work there too.
        let all = try groups(SQLiteLedger(path: directory.file("c.sqlite"), access: .readOnly))
        #expect(all.map { "\($0.0.rawValue)/\($0.1)" } == ["apple/2000000123456789", "google/other", "google/token-1"])
        let chain = all[2].2
        #expect(chain.map(\.subject) == ["token-1", "token-2", "token-2", "token-3", "token-3"])
        #expect(chain.map(\.kind.rawValue) == ["order", "link", "order", "link", "order"])
        #expect(chain.map(\.at) == chain.map(\.at).sorted())
    }

    @Test func aLinkCycleDoesNotHangAndGroupsUnderItsSmallestToken() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("cycle.sqlite"))
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            _ = try ledger.store(storedRecord("1"), facts: [link("tok-b", continues: "tok-a"), googleFact("tok-b")])
            _ = try ledger.store(storedRecord("2"), facts: [link("tok-c", continues: "tok-b"), googleFact("tok-c")])
            _ = try ledger.store(storedRecord("3"), facts: [link("tok-a", continues: "tok-c"), googleFact("tok-a")])
            // A tail entering the cycle.
            _ = try ledger.store(storedRecord("4"), facts: [link("tok-z", continues: "tok-c"), googleFact("tok-z")])
            // A self-link.
            _ = try ledger.store(storedRecord("5"), facts: [link("self", continues: "self"), googleFact("self")])
        }
        let all = try groups(ledger)
        #expect(all.map(\.1) == ["self", "tok-a"])
        #expect(all.last?.2.count == 8)
        #expect(all.first?.2.count == 2)
    }

    /// A chain of thousands of linked tokens is one group, under its first token, every token's root found by
    /// walks that stop at a token an earlier walk passed.
    @Test func aLongChainIsOneGroupUnderItsFirstToken() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("long.sqlite"))
        let count = 3_000
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            _ = try ledger.store(storedRecord("0"), facts: [googleFact("tok-00000")])
            for n in 1..<count {
                let token = "tok-" + String(100_000 + n).dropFirst(), previous = "tok-" + String(100_000 + n - 1).dropFirst()
                _ = try ledger.store(storedRecord("\(n)"), facts: [link(token, continues: previous), googleFact(token)])
            }
        }
        let roots = try ledger.chainRoots()
        #expect(roots.count == count && Set(roots.map(\.root)) == ["tok-00000"])
        let all = try groups(ledger)
        #expect(all.map(\.1) == ["tok-00000"])
        #expect(all.first?.2.count == 2 * count - 1)
    }

    @Test func factsWithinAGroupAreOrderedByAtKindObservedAtRef() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("o.sqlite"))
        let facts = [
            googleFact("t", kind: "order", at: 20, observedAt: 1, ref: "b"),
            googleFact("t", kind: "order", at: 20, observedAt: 1, ref: "a"),
            googleFact("t", kind: "order", at: 20, observedAt: 0, ref: "z"),
            googleFact("t", kind: "cancel", at: 20, observedAt: 5, ref: "z"),
            googleFact("t", kind: "zeta", at: 10, observedAt: 9, ref: "z"),
        ]
        try transaction(ledger) { (ledger: SQLiteLedger) throws in _ = try ledger.store(storedRecord("k"), facts: facts) }
        let ordered = try groups(ledger).first?.2 ?? []
        #expect(ordered == [facts[4], facts[3], facts[2], facts[1], facts[0]])
    }

    /// A long history (hundreds of facts, as years of renewals give) stored in shuffled order comes back in the
    /// documented order, computed here from the columns as tuples.
    @Test func aLongHistoryComesBackInTheDocumentedOrder() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("long.sqlite"))
        var generator = SystemRandomNumberGenerator()
        let kinds: [Fact.Kind] = ["order", "cancel", "state", "zeta"]
        let facts = (0..<400).map { (index: Int) -> Fact in
            let ref: String? = index % 5 == 0 ? nil : "GPA.\(index % 13)"
            return googleFact("t", kind: kinds[index % 4], at: Millis(index % 37), observedAt: Millis(index % 11), ref: ref)
        }
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            for (index, fact) in facts.shuffled(using: &generator).enumerated() {
                _ = try ledger.store(storedRecord("k\(index)", subject: "t"), facts: [fact])
            }
        }
        // Only these columns differ; a missing ref sorts first, as NULL does in SQL.
        func key(_ fact: Fact) -> (Millis, String, Millis, Int, String) {
            (fact.at, fact.kind.rawValue, fact.observedAt, fact.ref == nil ? 0 : 1, fact.ref ?? "")
        }
        let expected = Array(Set(facts)).sorted { key($0) < key($1) }
        #expect(try groups(ledger).first?.2 == expected)
    }
}

/// `Array.sortInPlace(by:)`, the sort of every subscription's facts at report time, against the standard sort.
@Suite struct SortInPlaceTests {
    @Test(arguments: [0, 1, 2, 3, 17, 256, 1_000])
    func sortsLikeTheStandardSort(count: Int) {
        var generator = SystemRandomNumberGenerator()
        let values = (0..<count).map { _ in (Int.random(in: 0..<20, using: &generator), "value-\(Int.random(in: 0..<50, using: &generator))") }
        var sorted = values
        sorted.sortInPlace { ($0.pointee.0, $0.pointee.1) < ($1.pointee.0, $1.pointee.1) }
        let expected = values.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        #expect(sorted.map(\.0) == expected.map(\.0) && sorted.map(\.1) == expected.map(\.1))
    }
}
