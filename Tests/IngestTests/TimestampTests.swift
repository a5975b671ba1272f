import Facts
import Testing

/// Issue 18.1 (the rendering half): a time at the edge of Int64 reached the summary, and printing it trapped,
/// so that every `status` and `report` on that ledger crashed. Writing a time never traps.
@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_709_294_400_000, "2024-03-01T12:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-86_400_000, "1969-12-31T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
        (-62_167_219_200_001, "-0001-12-31T23:59:59.999Z"),
        (Int64.max, "292278994-08-17T07:12:55.807Z"),
        (Int64.min, "-292275055-05-16T16:47:04.192Z"),
    ] as [(Int64, String)])
    func everyInstantIsWritten(instant: Int64, text: String) {
        #expect(Timestamp.rfc3339(instant) == text)
    }
}
