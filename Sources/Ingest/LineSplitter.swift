/// Splits `.ndjson` / `.jsonl` content into records, one per line.
///
/// Lines end at `\n`; a `\r` before it is dropped; blank (whitespace-only) lines are skipped but still counted,
/// so that ``Provenance/position`` is the 1-based line number an editor shows. A line longer than
/// `maximumRecordBytes` is yielded cut at that length (it will not parse, so it is quarantined) and the rest
/// of it is skipped: memory stays bounded by the longest allowed record.
///
/// A pretty-printed document among the lines (a line that opens an object or array it does not close, then
/// lines that do not start a record of their own at their first column) is one record, at the line that opened
/// it, however many lines it runs over: not a record per line, each quarantined. A line that opens a record
/// and is cut short stays one record too: the next record's line, starting with `{`, ends it. A document still
/// open when damage upstream cuts the input off is a half record, not yielded (``StreamStage``'s contract).
struct LineSplitter: StreamStage {
    let file: String
    let member: String?
    let maximumRecordBytes: Int
    /// The start of a line whose end has not arrived yet.
    private var pending: [UInt8] = []
    /// The current line was too long and has been yielded; skip to its end.
    private var discarding = false
    /// 1-based number of the line being assembled.
    private var line: Int64 = 1
    /// A document that runs over several lines, while it is still open.
    private var open: OpenDocument?

    /// The lines of a document read so far, and where its brackets and strings stand.
    private struct OpenDocument {
        var bytes: [UInt8]
        var firstLine: Int64
        var depth = 0
        var inString = false
        var escaped = false

        /// Follows `line`'s strings, escapes and nesting, from where the previous lines left them.
        mutating func track(_ line: [UInt8]) {
            for byte in line { JSONDocumentSplitter.step(byte, inString: &inString, escaped: &escaped, depth: &depth) }
        }

        var isClosed: Bool { depth == 0 && !inString }
    }

    init(file: String, member: String?, maximumRecordBytes: Int) {
        self.file = file
        self.member = member
        self.maximumRecordBytes = maximumRecordBytes
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        let bytes = chunk.assumingMemoryBound(to: UInt8.self)
        var start = 0
        while start < bytes.count {
            guard let newline = bytes.index(of: 0x0A, from: start) else {
                append(UnsafeBufferPointer(rebasing: bytes[start...]))
                try flushOverlong(emit: emit)
                return
            }
            try complete(UnsafeBufferPointer(rebasing: bytes[start..<newline]), emit: emit)
            start = newline + 1
        }
    }

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        if !pending.isEmpty || discarding {
            try complete(UnsafeBufferPointer(start: nil, count: 0), emit: emit)
        }
        try closeOpenDocument(emit: emit)
    }

    /// Ends the current line with `tail` as its last bytes.
    private mutating func complete(_ tail: UnsafeBufferPointer<UInt8>, emit: (RawRecord) throws -> Void) throws {
        defer { line += 1 }
        if discarding {
            discarding = false
            return
        }
        var record: [UInt8]
        if pending.isEmpty {
            record = Array(tail)
        } else {
            pending.append(contentsOf: tail)
            record = pending
            pending = []
        }
        if record.last == 0x0D { record.removeLast() }
        // A byte order mark, as Windows tools write, before the first line.
        if line == 1, record.starts(with: [0xEF, 0xBB, 0xBF]) { record.removeFirst(3) }
        guard !Self.isBlank(record) else { return }
        if var document = open {
            if record.first != UInt8(ascii: "{"), document.bytes.count + 1 + record.count <= maximumRecordBytes {
                document.bytes.append(0x0A)
                document.bytes.append(contentsOf: record)
                document.track(record)
                open = document
                if document.isClosed { try closeOpenDocument(emit: emit) }
                return
            }
            // The next record's line, or more than a record may hold: the document ends before this line.
            try closeOpenDocument(emit: emit)
        }
        if Self.mayOpenDocument(record) {
            var document = OpenDocument(bytes: record, firstLine: line)
            document.track(record)
            if !document.isClosed, record.count < maximumRecordBytes {
                open = document
                return
            }
        }
        if record.count > maximumRecordBytes { record.removeSubrange(maximumRecordBytes...) }
        try emit(RawRecord(bytes: record, provenance: Provenance(file: file, member: member, position: line)))
    }

    /// Whether `line` may open a document that goes on over the next lines: it starts an object or array and
    /// does not end one. A record on one line ends with `}` (checked first: one byte for nearly every line).
    private static func mayOpenDocument(_ line: [UInt8]) -> Bool {
        guard let last = line.last(where: { !JSONDocumentSplitter.isWhitespace($0) }),
              last != UInt8(ascii: "}"), last != UInt8(ascii: "]"),
              let first = line.first(where: { !JSONDocumentSplitter.isWhitespace($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Yields the open document as one record at the line that opened it (closed, or cut off: then it is one
    /// malformed record, not one per line).
    private mutating func closeOpenDocument(emit: (RawRecord) throws -> Void) throws {
        guard let document = open else { return }
        open = nil
        try emit(RawRecord(bytes: document.bytes, provenance: Provenance(file: file, member: member, position: document.firstLine)))
    }

    /// Keeps the unfinished start of a line, at most one byte beyond the bound (enough to know it is too long).
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !discarding else { return }
        let room = maximumRecordBytes + 1 - pending.count
        pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<min(bytes.count, max(room, 0))]))
    }

    /// Yields a line that has outgrown the bound before its end arrived, and skips the rest of it.
    private mutating func flushOverlong(emit: (RawRecord) throws -> Void) throws {
        guard pending.count > maximumRecordBytes else { return }
        try closeOpenDocument(emit: emit)
        let record = Array(pending[..<maximumRecordBytes])
        pending = []
        discarding = true
        try emit(RawRecord(bytes: record, provenance: Provenance(file: file, member: member, position: line)))
    }

    static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}
