import Facts
import Foundation

extension TimeZone {
    /// The zone's IANA name as reports show it. Foundation on Linux canonicalises `UTC` to `GMT`; both are the
    /// same zero-offset zone, and analysts (and the default `--timezone`) call it UTC.
    public var reportName: String { identifier == "GMT" ? "UTC" : identifier }

    /// An instant (ms, UTC) as the reports print it: RFC 3339 in this zone with its offset at that instant
    /// (`2024-05-01T08:59:59.999+09:00` in Asia/Tokyo, `...Z` in UTC), so the time reads in the zone the report
    /// is labelled with.
    public func reportTime(_ instant: Millis) -> String {
        Timestamp.rfc3339(instant, offsetSeconds: secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant) / 1000)))
    }
}
