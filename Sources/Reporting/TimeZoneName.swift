import Foundation

extension TimeZone {
    /// The zone's IANA name as reports show it. Foundation on Linux canonicalises `UTC` to `GMT`; both are the
    /// same zero-offset zone, and analysts (and the default `--timezone`) call it UTC.
    var reportName: String { identifier == "GMT" ? "UTC" : identifier }
}
