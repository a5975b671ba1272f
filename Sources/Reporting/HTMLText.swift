import Foundation

/// Text building for `report.html`: escaping and the few number formats the drawing needs.
///
/// Every string that comes from data (product ids, currencies, months) passes through ``escape(_:)`` before it
/// reaches the page, in element content and in attribute values alike, so no payload text can open a tag or end
/// an attribute.
enum HTMLText {
    /// `value` with `&`, `<`, `>`, `"` and `'` replaced by character references: safe in content and in
    /// double- or single-quoted attribute values. Control characters other than tab and line feed (not allowed in
    /// HTML text) become U+FFFD.
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            case let c where c.value < 0x20 || (0x7F...0x9F).contains(c.value): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A drawing coordinate or length in SVG user units, one decimal (`12.5`, tenths rounded half away from zero),
    /// never `-0.0`. Built from integers: `String(format:)` was the page's largest cost (a page draws tens of
    /// thousands of coordinates).
    static func coordinate(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        guard tenths.isFinite, abs(tenths) < 1e15 else { return value.isFinite ? String(format: "%.1f", value) : "0" }
        let magnitude = Int64(abs(tenths))
        return (tenths < 0 ? "-" : "") + String(magnitude / 10) + "." + String(magnitude % 10)
    }

    /// An axis tick label: as many decimals as the tick step needs (step 0.05 → `0.15`, step 20 → `140`).
    static func tick(_ value: Double, step: Double) -> String {
        let places = step >= 1 ? 0 : min(6, Int((-log10(step)).rounded(.up)))
        let text = String(format: "%.\(places)f", value)
        return text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) ? String(text.dropFirst()) : text
    }
}
