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
            var order = Array(0..<object.count)
            if sorted { order.sort { object.keys[$0].utf8.lexicographicallyPrecedes(object.keys[$1].utf8) } }
            for (i, index) in order.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(object.keys[index], into: &out)
                out.append(UInt8(ascii: ":"))
                write(object.values[index], sorted: sorted, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes `s` quoted and escaped. Runs of bytes that need no escape are copied whole: every Google payload is
    /// written here for its dedup key, and a byte-at-a-time append was 4% of ingest's samples.
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
