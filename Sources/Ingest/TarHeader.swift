/// One 512-byte tar header block, decoded (POSIX.1-1988 ustar layout, with the GNU and pax extensions readers
/// meet in practice).
struct TarHeader: Sendable, Hashable {
    /// `prefix/name` for ustar headers, else `name`.
    var name: String
    /// Data bytes following the header (before padding to 512).
    var size: Int64
    /// The type flag: `0`/NUL regular file, `5` directory, `x` pax header, `L` GNU long name, ...
    var type: UInt8

    /// Decodes a header block; `nil` when its checksum does not match (not a tar header, or corrupt).
    init?(_ block: [UInt8]) {
        guard block.count == 512, let stored = Self.octal(block[148..<156]) else { return nil }
        // The checksum is the sum of all bytes with the checksum field read as spaces; old writers summed
        // signed bytes, so both sums are accepted.
        var unsigned: Int64 = 0
        var signed: Int64 = 0
        for (i, byte) in block.enumerated() {
            let value = (148..<156).contains(i) ? UInt8(ascii: " ") : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        guard stored == unsigned || stored == signed else { return nil }
        guard let size = Self.number(block[124..<136]), size >= 0 else { return nil }
        self.size = size
        self.type = block[156]
        let name = Self.string(block[0..<100])
        // POSIX "ustar\0" only: old GNU headers ("ustar  ") keep access times where ustar has its prefix.
        let isUstar = block[257..<263].elementsEqual([0x75, 0x73, 0x74, 0x61, 0x72, 0x00])
        let prefix = isUstar ? Self.string(block[345..<500]) : ""
        self.name = prefix.isEmpty ? name : prefix + "/" + name
    }

    /// A NUL-terminated field.
    static func string(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// A numeric field: octal digits (space or NUL padded), or GNU base-256 when the high bit of the first byte is set.
    static func number(_ field: ArraySlice<UInt8>) -> Int64? {
        guard let first = field.first else { return nil }
        if first & 0x80 != 0 {
            var value: Int64 = Int64(first & 0x7F)
            for byte in field.dropFirst() {
                guard value < Int64.max >> 8 else { return nil }
                value = value << 8 | Int64(byte)
            }
            return value
        }
        return octal(field)
    }

    static func octal(_ field: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        for byte in field {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                guard value < Int64.max >> 3 else { return nil }
                value = value << 3 | Int64(byte - UInt8(ascii: "0"))
                digits += 1
            case UInt8(ascii: " ") where digits == 0:
                continue
            case 0, UInt8(ascii: " "):
                return value
            default:
                return nil
            }
        }
        return value
    }

    /// The `path` and `size` of a pax extended header (`"<length> <key>=<value>\n"` records), where it has them:
    /// pax writers put a member's size there when the header's 12 octal digits cannot hold it (8 GiB or more),
    /// leaving the header's size 0. A `size` that is no decimal count is not read.
    static func paxRecords(_ data: [UInt8]) -> (path: String?, size: Int64?) {
        var path: String?
        var size: Int64?
        var index = 0
        while index < data.count {
            guard let space = data[index...].firstIndex(of: UInt8(ascii: " ")),
                  let length = Int(String(decoding: data[index..<space], as: UTF8.self)),
                  length > 0, index + length <= data.count
            else { break }
            let record = data[(space + 1)..<(index + length)]
            if let equals = record.firstIndex(of: UInt8(ascii: "=")) {
                var value = record[(equals + 1)...]
                if value.last == 0x0A { value = value.dropLast() }
                switch String(decoding: record[record.startIndex..<equals], as: UTF8.self) {
                case "path": path = String(decoding: value, as: UTF8.self)
                case "size": size = Int64(String(decoding: value, as: UTF8.self)).flatMap { $0 >= 0 ? $0 : nil }
                default: break
                }
            }
            index += length
        }
        return (path, size)
    }
}
