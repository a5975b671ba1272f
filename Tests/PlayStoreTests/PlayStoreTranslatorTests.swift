import Facts
import Ingest
import PlayStore
import Testing

@Test func emptyHistoryForNoFacts() {
    let history = GoogleHistoryBuilder().history(id: "tok", facts: [])
    #expect(history.id == "tok")
    #expect(history.platform == .google)
    #expect(history.periods.isEmpty)
}
