/// A ustar archive built in memory: 512-byte headers, data padded to 512 bytes, two zero blocks at the end.
struct TarWriter {
    private(set) var bytes: [UInt8] = []

    /// Adds a regular file `name` (at most 100 bytes) with `contents`; `modified` in seconds since the epoch.
    mutating func add(name: String, contents: [UInt8], modified: Int64) {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int, width: Int) {
            for (index, byte) in text.utf8.prefix(width).enumerated() { header[offset + index] = byte }
        }
        func octal(_ value: Int64, width: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits
        }
        put(name, at: 0, width: 100)
        put(octal(0o644, width: 8), at: 100, width: 8)
        put(octal(0, width: 8), at: 108, width: 8)
        put(octal(0, width: 8), at: 116, width: 8)
        put(octal(Int64(contents.count), width: 12), at: 124, width: 12)
        put(octal(modified, width: 12), at: 136, width: 12)
        put("        ", at: 148, width: 8)
        header[156] = UInt8(ascii: "0")
        put("ustar", at: 257, width: 6)
        put("00", at: 263, width: 2)
        put("subledger", at: 265, width: 32)
        put("subledger", at: 297, width: 32)
        let checksum = header.reduce(0) { $0 + Int64($1) }
        put(octal(checksum, width: 7), at: 148, width: 6)
        header[154] = 0
        header[155] = UInt8(ascii: " ")
        bytes.append(contentsOf: header)
        bytes.append(contentsOf: contents)
        let padding = (512 - contents.count % 512) % 512
        bytes.append(contentsOf: [UInt8](repeating: 0, count: padding))
    }

    /// The archive with its end-of-archive marker.
    var finished: [UInt8] { bytes + [UInt8](repeating: 0, count: 1024) }
}
