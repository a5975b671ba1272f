import Facts
import Ingest

/// Apple's instants as its payloads write them: legacy (``millis(_:_:)``) and signed (``signedTime(_:_:path:times:)``).
enum AppleDate {
    /// An epoch-milliseconds member of a signed payload (`signedDate`, `purchaseDate`, ...), inside `times`;
    /// `nil` when absent or not a number.
    /// - Throws: `implausible_timestamp` naming the field (`path.key`) when outside `times`.
    static func signedTime(_ object: JSON, _ key: String, path: String, times: PlausibleTimes) throws(Rejection) -> Millis? {
        guard let instant = object[key]?.int64 else { return nil }
        guard times.contains(instant) else {
            throw .quarantined(.implausibleTimestamp, times.detail(field: JSON.path(path, key), instant: instant))
        }
        return instant
    }

    /// ms UTC from a `*_ms` field, or from a legacy date field: epoch ms (iOS 6 `expires_date`, a number or a
    /// numeric string) or the `"2024-01-17 10:00:00 Etc/GMT"` text of iOS 7 receipts. `nil` when absent, empty,
    /// or `"0"` (Apple's "not set", e.g. `cancellation_date_ms: "0"`); any other number is returned as it is, for
    /// ``time(_:_:path:times:)`` to judge.
    static func millis(_ object: JSON, _ base: String) -> Millis? {
        if let value = object[base + "_ms"], let ms = value.int64 { return ms != 0 ? ms : nil }
        guard let value = object[base] else { return nil }
        if let ms = value.int64 { return ms != 0 ? ms : nil }
        guard let text = value.nonEmptyString else { return nil }
        return parseGMT(text)
    }

    /// ``millis(_:_:)`` checked against `times`: an instant outside is `implausible_timestamp`, naming the field
    /// (`path.base_ms`, or `path.base` when only that spelling is sent).
    static func time(_ object: JSON, _ base: String, path: String, times: PlausibleTimes) throws(Rejection) -> Millis? {
        guard let instant = millis(object, base) else { return nil }
        guard times.contains(instant) else {
            let field = object[base + "_ms"]?.int64 != nil ? base + "_ms" : base
            throw .quarantined(.implausibleTimestamp, times.detail(field: JSON.path(path, field), instant: instant))
        }
        return instant
    }

    /// Whether any spelling of `base` is present (with a non-empty value).
    static func has(_ object: JSON, _ base: String) -> Bool {
        (object[base + "_ms"]?.nonEmptyString != nil) || (object[base]?.nonEmptyString != nil)
    }

    /// Parses `yyyy-MM-dd HH:mm:ss Etc/GMT` (also `...Z` / `UTC`); other zones are not sent for `*_date`
    /// fields (Apple's `_pst` fields carry them, and the `_ms` fields are preferred anyway).
    static func parseGMT(_ text: String) -> Millis? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in from..<(from + count) {
                let b = bytes[i]
                guard b >= 48, b <= 57 else { return nil }
                value = value * 10 + Int(b - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...RFC3339.daysIn(month: Int64(month), year: Int64(year))).contains(Int64(day)),
              hour < 24, minute < 60, second < 60
        else { return nil }
        let rest = String(decoding: bytes[19...], as: UTF8.self).trimmingCharacters(in: " ")
        guard rest.isEmpty || rest == "Etc/GMT" || rest == "GMT" || rest == "UTC" || rest == "Z" else { return nil }
        let days = Timestamp.daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        return ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60 * 1000 + Int64(second) * 1000
    }
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        var slice = Substring(self)
        while slice.first == character { slice.removeFirst() }
        while slice.last == character { slice.removeLast() }
        return String(slice)
    }
}
