/// Serialises ``JSON`` compactly. The canonical form (members sorted by key, no whitespace, numbers as written)
/// is what deduplication digests, so that two spellings of one payload with reordered members are one record.
public enum JSONWriter {
    /// Compact JSON, members in source order.
    public static func compact(_ value: JSON) -> String {
        var out: [UInt8] = []
        write(value, sorted: false, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Canonical bytes: members sorted by key (by UTF-8 bytes), no whitespace.
    public static func canonical(_ value: JSON) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, sorted: true, into: &out)
        return out
    }

    static func write(_ value: JSON, sorted: Bool, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, sorted: sorted, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            if sorted && object.count > 1 {
                for index in sortedOrder(of: object.keys) { writeMember(of: object, at: index, sorted: sorted, into: &out) }
            } else {
                for index in object.keys.indices { writeMember(of: object, at: index, sorted: sorted, into: &out) }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes one `"key":value` member, preceded by a comma unless it is the first (`out` then ends in `{`:
    /// a value never does).
    private static func writeMember(of object: JSONObject, at index: Int, sorted: Bool, into out: inout [UInt8]) {
        if out.last != UInt8(ascii: "{") { out.append(UInt8(ascii: ",")) }
        writeString(object.keys[index], into: &out)
        out.append(UInt8(ascii: ":"))
        write(object.values[index], sorted: sorted, into: &out)
    }

    /// The indexes of `keys` in the order of their UTF-8 bytes (stable for equal keys). The keys are copied
    /// once into one buffer and sorted as byte ranges of it: comparing the `String`s themselves retained and
    /// released both on every comparison, which made sorting most of the canonical writer's time.
    static func sortedOrder(of keys: [String]) -> [Int] {
        var bytes: [UInt8] = []
        var ranges: [(start: Int, end: Int, index: Int)] = []
        ranges.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() {
            let start = bytes.count
            bytes.append(contentsOf: key.utf8)
            ranges.append((start, bytes.count, index))
        }
        bytes.withUnsafeBufferPointer { bytes in
            func precedes(_ a: (start: Int, end: Int, index: Int), _ b: (start: Int, end: Int, index: Int)) -> Bool {
                var i = a.start
                var j = b.start
                while i < a.end && j < b.end {
                    if bytes[i] != bytes[j] { return bytes[i] < bytes[j] }
                    i += 1
                    j += 1
                }
                let (aLength, bLength) = (a.end - a.start, b.end - b.start)
                return aLength != bLength ? aLength < bLength : a.index < b.index
            }
            if !zip(ranges, ranges.dropFirst()).allSatisfy({ precedes($0, $1) }) { ranges.sort(by: precedes) }
        }
        return ranges.map(\.index)
    }

    /// Writes `s` quoted and escaped. Runs of bytes that need no escape are copied whole: every payload without
    /// a delivery id is written here for its dedup key, and a byte-at-a-time append was 4% of ingest's samples.
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
