/// The instants a store record can plausibly state (ms, UTC), checked wherever a time enters the pipeline.
///
/// From 2008-01-01T00:00:00Z (the App Store opened in July 2008, Android Market in October 2008: no purchase is
/// older) to the run's clock plus ten years (the farthest future a store states: an annual expiry, a grace end,
/// a scheduled resume, with room to spare). A time outside is a unit mistake, a typo or hostile input; the record
/// (or the part of it) that states it is quarantined as `implausible_timestamp`, naming the field, so that no
/// later arithmetic (month tables, `+ 60 days`, RFC 3339 text) ever sees an instant near the ends of `Int64`.
///
/// The clock is a value given by the caller (the CLI reads it once per run), never read here, so that a test
/// pins it and gets the same answer every time.
public struct PlausibleTimes: Sendable, Hashable {
    /// 2008-01-01T00:00:00Z.
    public static let storesOpened: Millis = 1_199_145_600_000
    /// The margin allowed after the clock: ten years of 365.25 days.
    public static let futureMargin: Millis = 315_576_000_000

    /// The earliest plausible instant (inclusive).
    public let earliest: Millis
    /// The latest plausible instant (inclusive).
    public let latest: Millis

    /// The window of a run whose clock reads `now` (ms, UTC): from ``storesOpened`` to `now` + ``futureMargin``
    /// (saturating, so any clock value is accepted).
    public init(now: Millis) {
        earliest = Self.storesOpened
        latest = now.addingReportingOverflow(Self.futureMargin).overflow ? .max : now + Self.futureMargin
    }

    /// A window with explicit bounds (inclusive).
    public init(earliest: Millis, latest: Millis) {
        self.earliest = earliest
        self.latest = latest
    }

    /// The widest window a ledger can hold whatever clock its ingests ran with: from ``storesOpened`` to
    /// 9999-12-31T23:59:59.999Z (the last instant RFC 3339 can write). Reports read only facts inside it.
    public static let representable = PlausibleTimes(earliest: storesOpened, latest: 253_402_300_799_999)

    /// Whether `instant` lies in the window.
    public func contains(_ instant: Millis) -> Bool { instant >= earliest && instant <= latest }

    /// Whether every instant of `fact` (`at`, `observedAt`, `end`) lies in the window.
    public func contains(_ fact: Fact) -> Bool {
        contains(fact.at) && contains(fact.observedAt) && (fact.end.map(contains) ?? true)
    }

    /// A sentence for a quarantine detail: `field` holds `instant`, which lies outside the window.
    public func detail(field: String, instant: Millis) -> String {
        let side = instant < earliest ? "before \(Timestamp.rfc3339(earliest))" : "after \(Timestamp.rfc3339(latest))"
        return "\(field) is \(instant) ms (\(Timestamp.rfc3339(instant))), \(side): not a plausible store time"
    }
}
