import Testing
@testable import AppStore

/// `*_date` fields of receipts and V1 notifications (`2024-03-05 10:00:00 Etc/GMT`): the same calendar checks
/// as the RFC 3339 parser, so an impossible date is missing rather than silently the next month.
@Suite struct AppleDateTests {
    @Test func parsesGMTDates() {
        #expect(AppleDate.parseGMT("2024-03-05 10:00:00 Etc/GMT") == 1_709_632_800_000)
        #expect(AppleDate.parseGMT("2024-02-29 00:00:00 Etc/GMT") == 1_709_164_800_000)
    }

    @Test(arguments: ["2024-02-30 00:00:00 Etc/GMT", "2023-02-29 00:00:00 Etc/GMT", "2024-04-31 00:00:00 Etc/GMT",
                      "2024-03-05 10:00:60 Etc/GMT", "2024-03-05 10:00:00 America/Los_Angeles"])
    func rejectsImpossibleDates(text: String) {
        #expect(AppleDate.parseGMT(text) == nil)
    }
}
