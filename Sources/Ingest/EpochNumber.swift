import Facts

/// An epoch time written as a decimal number (`1756200000`, `1756200000.123`, `"1709294400000"`, `1.7562e9`),
/// read exactly from its text (no floating point): backends log `received_at` this way.
///
/// Unit: a value from 0 up to 10^11 is seconds (10^11 ms is 1973-03-03, 10^11 s the year 5138, so no real time is
/// ambiguous), kept to the millisecond; any other value is milliseconds, its fraction dropped. A magnitude beyond
/// `Int64` saturates to `Int64.min` / `Int64.max`: still a number, and far outside any plausible time.
struct EpochNumber {
    /// The instant (ms, UTC).
    let millis: Millis
    /// The text was in seconds.
    let inSeconds: Bool

    /// `nil` when `text` is not a decimal number (optional `-`, digits, optional `.digits`, optional exponent).
    init?<Text: StringProtocol>(_ text: Text) {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        }
        var digits: [UInt8] = []
        var pointIndex: Int?
        while let byte = bytes.first, (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: ".") {
            if byte == UInt8(ascii: ".") {
                guard pointIndex == nil else { return nil }
                pointIndex = digits.count
            } else {
                digits.append(byte - 0x30)
            }
            bytes = bytes.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var point = pointIndex ?? digits.count
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var exponentNegative = false
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                exponentNegative = sign == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            var exponent = 0
            for byte in bytes { exponent = min(exponent * 10 + Int(byte - 0x30), 1000) }
            point += exponentNegative ? -exponent : exponent
            bytes = bytes[bytes.endIndex...]
        }
        guard bytes.isEmpty else { return nil }
        // The integer part, saturating, and the first three digits after the point.
        var integer: Int64 = 0
        var saturated = false
        for index in 0..<max(point, 0) {
            let digit = index < digits.count ? Int64(digits[index]) : 0
            let (scaled, overflow) = integer.multipliedReportingOverflow(by: 10)
            let (next, carry) = scaled.addingReportingOverflow(digit)
            if overflow || carry {
                saturated = true
                break
            }
            integer = next
        }
        if saturated {
            millis = negative ? .min : .max
            inSeconds = false
            return
        }
        var fraction: Int64 = 0
        for index in point..<(point + 3) {
            fraction = fraction * 10 + (index >= 0 && index < digits.count ? Int64(digits[index]) : 0)
        }
        inSeconds = !negative && integer < 100_000_000_000
        millis = inSeconds ? integer * 1000 + fraction : negative ? -integer : integer
    }
}
