/// How the bytes of one file or archive member are laid out, recognised by their content (`inputs.md`: "A file
/// is recognised by its content (gzip, zip and tar magic, JSON's first byte), not by its name").
///
/// JSON text is laid out by its first value: an object or array that runs over several lines is a document (one
/// record, an array of records, or documents one after another), whatever the name; an object that ends on its
/// first line starts a record per line (NDJSON, under any name, `.json` included when another value follows it).
/// Where content cannot tell, the name does: text starting with garbage is read a record per line under
/// `.ndjson` / `.jsonl` (the garbage quarantined, not the whole file skipped) and as a document under `.json`.
/// Other names: text starting with `[` is an array, text starting with `"` or a bare JWS is a record per line,
/// as is text with such a line after a first line of something else.
enum ContainerKind: Sendable, Hashable {
    /// One record per line (`.ndjson`, `.jsonl`, and JSON text of no other layout).
    case lines
    /// One record, or a top-level array of records (`.json`, or text starting with `[`).
    case json
    /// gzip (RFC 1952); what it holds is recognised in turn when it is inflated.
    case gzip
    /// tar (ustar, pax, GNU, or the pre-POSIX layout: any block whose header checksum holds).
    case tar
    /// zip, read through its central directory (``ZipReader``); a zip inside another archive is damage.
    case zip

    /// Bytes a recogniser wants before it decides (a tar header is 512 bytes; a garbage first line is seldom
    /// longer than this).
    static let headSize = 4096

    /// What content starting with `head` is, `name` being the file's or member's name (for a gzip's content:
    /// the name without `.gz`). `complete`: `head` is the whole content (shorter than ``headSize``).
    /// - Returns: the kind, or why it is not an input (what it looks like, to be said to the user).
    static func recognise(head: some Collection<UInt8>, name: String) -> Result<ContainerKind, NotAnInput> {
        let bytes = Array(head.prefix(headSize))
        if bytes.starts(with: [0x1F, 0x8B]) { return .success(.gzip) }
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) || bytes.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            if let document = zippedDocument(bytes) { return .failure(NotAnInput(reason: "not an archive of records: " + document)) }
            return .success(.zip)
        }
        if bytes.count >= 512, TarHeader(Array(bytes[..<512])) != nil { return .success(.tar) }
        // Two zero blocks are a tar's end: an empty archive (what `tar` writes for a day with nothing to pack).
        if bytes.count >= 1024, bytes[..<1024].allSatisfy({ $0 == 0 }) { return .success(.tar) }
        let lower = name.lowercased()
        let namedLines = lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl"), namedJSON = lower.hasSuffix(".json")
        switch firstMeaningfulByte(bytes) {
        case UInt8(ascii: "{")?:
            let first = firstValue(bytes)
            if first.spansLines { return .success(.json) }
            return .success(namedJSON && !first.isFollowed ? .json : .lines)
        case UInt8(ascii: "[")?:
            return .success(namedLines && !firstValue(bytes).spansLines ? .lines : .json)
        case UInt8(ascii: "\"")?:
            return .success(namedJSON ? .json : .lines)
        default: break
        }
        if namedLines { return .success(.lines) }
        if namedJSON { return .success(.json) }
        if startsWithJWS(bytes[...]) || hasJSONLine(bytes) { return .success(.lines) }
        return .failure(NotAnInput(head: bytes))
    }

    /// Whether `head` already tells its kind, before ``headSize`` bytes: gzip or zip magic, or JSON text (a tar
    /// header starts with a file name, never with `{`, `[` or `"`). A recogniser that waited for more would hold
    /// back the records of a short member cut off before ``headSize`` bytes.
    static func isConclusive(_ head: [UInt8]) -> Bool {
        if head.count >= 2, head.starts(with: [0x1F, 0x8B]) { return true }
        if head.count >= 4, head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return true }
        switch firstMeaningfulByte(head) {
        case UInt8(ascii: "{")?, UInt8(ascii: "[")?, UInt8(ascii: "\"")?: return true
        default: return false
        }
    }

    /// What a zip is when its first member says it is a document format built on zip (their specifications put
    /// that member first): an export folder often holds a spreadsheet beside the archives.
    static func zippedDocument(_ head: [UInt8]) -> String? {
        guard head.count >= 30, head.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return nil }
        let length = Int(head[26]) | Int(head[27]) << 8
        guard head.count >= 30 + length else { return nil }
        let name = String(decoding: head[30..<30 + length], as: UTF8.self)
        switch name {
        case "[Content_Types].xml": return "an Office document (xlsx, docx, pptx)"
        case "mimetype": return "an OpenDocument or EPUB file"
        case "META-INF/", "META-INF/MANIFEST.MF": return "a Java archive"
        default: return nil
        }
    }

    /// The first byte after a UTF-8 byte order mark and JSON whitespace.
    static func firstMeaningfulByte(_ bytes: [UInt8]) -> UInt8? {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.first { !JSONDocumentSplitter.isWhitespace($0) }
    }

    /// The shape of the first JSON value in `head`, as far as `head` shows it: whether a line ends inside it (a
    /// pretty-printed document), and whether anything but whitespace follows it (another record). A value the
    /// head ends inside, on its first line, neither spans lines nor is followed.
    static func firstValue(_ head: [UInt8]) -> (spansLines: Bool, isFollowed: Bool) {
        head.withUnsafeBufferPointer { bytes in
            var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            while index < bytes.count, JSONDocumentSplitter.isWhitespace(bytes[index]) { index += 1 }
            // The splitter's own tracking of strings, escapes and nesting, strings skipped with memchr: this
            // runs on the head of every JSON file and member.
            var depth = 0, inString = false, escaped = false
            while index < bytes.count {
                if inString && !escaped {
                    index = JSONDocumentSplitter.quoteOrBackslash(in: bytes, from: index)
                    guard index < bytes.count else { break }
                }
                let byte = bytes[index]
                index += 1
                if byte == 0x0A, !inString, depth > 0 { return (true, false) }
                JSONDocumentSplitter.step(byte, inString: &inString, escaped: &escaped, depth: &depth)
                if depth == 0, !inString { break }
            }
            return (false, bytes[index...].contains { !JSONDocumentSplitter.isWhitespace($0) })
        }
    }

    /// A compact JWS logged bare: base64url of `{"`, the start of every JOSE header.
    static func startsWithJWS(_ line: ArraySlice<UInt8>) -> Bool {
        line.drop { JSONDocumentSplitter.isWhitespace($0) }.starts(with: Array("eyJ".utf8))
    }

    /// Whether a line after the first (the first may be garbage a logger wrote) starts a JSON object or a JWS.
    static func hasJSONLine(_ bytes: [UInt8]) -> Bool {
        bytes.split(separator: 0x0A, omittingEmptySubsequences: true).dropFirst().contains { line in
            line.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D } == UInt8(ascii: "{") || startsWithJWS(line)
        }
    }

    /// Content that is none of the inputs, with a reason that says what it looks like.
    struct NotAnInput: Error, Sendable, Hashable {
        var reason: String

        init(reason: String) {
            self.reason = reason
        }

        init(head: [UInt8]) {
            let known: [(magic: [UInt8], what: String)] = [
                ([0x42, 0x5A, 0x68], "bzip2-compressed: decompress it, or recompress it with gzip"),
                ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "xz-compressed: decompress it, or recompress it with gzip"),
                ([0x28, 0xB5, 0x2F, 0xFD], "zstd-compressed: decompress it, or recompress it with gzip"),
                ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], "a 7-Zip archive: extract it, or repack it as zip or tar"),
                ([0x52, 0x61, 0x72, 0x21], "a RAR archive: extract it, or repack it as zip or tar"),
                (Array("SQLite format 3".utf8), "an SQLite database"),
                (Array("%PDF".utf8), "a PDF document"),
                (Array("PAR1".utf8), "a Parquet file"),
            ]
            if head.isEmpty {
                reason = "an empty file"
            } else if let match = known.first(where: { head.starts(with: $0.magic) }) {
                reason = "not JSON, gzip, tar or zip: " + match.what
            } else {
                let shown = head.prefix(8).map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: " ")
                reason = "not JSON, gzip, tar or zip (it starts with the bytes \(shown))"
            }
        }
    }
}
