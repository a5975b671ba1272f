/// Splits `.ndjson` / `.jsonl` content into records, one per line.
///
/// Lines end at `\n`; a `\r` before it is dropped; blank (whitespace-only) lines are skipped but still counted,
/// so that ``Provenance/position`` is the 1-based line number an editor shows. A line longer than
/// `maximumRecordBytes` is yielded cut at that length (it will not parse, so it is quarantined) and the rest
/// of it is skipped: memory stays bounded by the longest allowed record.
///
/// A pretty-printed document among the lines is one record, at the line that opened it, however many lines it
/// runs over: not a record per line, each quarantined. It opens at a line that starts an object or array it
/// does not close, and goes on over the lines JSON lets follow: any line after an open bracket, a comma or a
/// colon; after a value, only a line that closes a bracket or brings a comma. When it closes it is one record;
/// when it cannot go on (a line no document could continue, the end of the input, more than a record may
/// hold), its lines are records of their own, at their own numbers, as if it had never opened: a line cut
/// short swallows no record after it. A document still open when damage upstream cuts the input off is a half
/// record, not yielded (``StreamStage``'s contract).
///
/// A JSON array on a line (or a pretty-printed one over several) is a batch of records: each element is a
/// record, numbered with the line the array starts on.
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

    /// The lines of a document read so far (with their numbers), and where its brackets and strings stand.
    private struct OpenDocument {
        var lines: [(number: Int64, bytes: [UInt8])] = []
        var byteCount = 0
        var depth = 0
        var inString = false
        var escaped = false
        /// The last byte outside strings that is not whitespace (a string's opening quote stands for it).
        var last: UInt8 = 0

        /// Adds `line`, following its strings, escapes and nesting from where the previous lines left them.
        mutating func add(_ line: [UInt8], number: Int64) {
            for byte in line {
                let wasInString = inString
                JSONDocumentSplitter.step(byte, inString: &inString, escaped: &escaped, depth: &depth)
                if !wasInString, !JSONDocumentSplitter.isWhitespace(byte) { last = byte }
            }
            byteCount += (lines.isEmpty ? 0 : 1) + line.count
            lines.append((number, line))
        }

        var isClosed: Bool { depth == 0 && !inString }

        /// Whether JSON lets `line` follow what the document holds so far: anything after `[`, `{`, `,`, `:` or
        /// inside a string; after a value, a line that closes a bracket or brings a comma.
        func isContinued(by line: [UInt8]) -> Bool {
            if inString { return true }
            switch last {
            case UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","), UInt8(ascii: ":"): return true
            default:
                guard let first = line.first(where: { !JSONDocumentSplitter.isWhitespace($0) }) else { return false }
                return first == UInt8(ascii: "}") || first == UInt8(ascii: "]") || first == UInt8(ascii: ",")
            }
        }

        /// The document as one record's bytes: its lines joined by newlines.
        var joined: [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(byteCount)
            for (index, line) in lines.enumerated() {
                if index > 0 { bytes.append(0x0A) }
                bytes.append(contentsOf: line.bytes)
            }
            return bytes
        }
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
        // Taken out of `open` while it grows, so that its lines are appended in place, not copied per line.
        if var document = open.take() {
            if document.isContinued(by: record), document.byteCount + 1 + record.count <= maximumRecordBytes {
                document.add(record, number: line)
                if document.isClosed { try yield(document, emit: emit) } else { open = document }
                return
            }
            // No document goes on with this line (or it would hold more than a record may): its lines were
            // records of their own; this line is read afresh.
            try yield(document, emit: emit)
        }
        if Self.mayOpenDocument(record), record.count < maximumRecordBytes {
            var document = OpenDocument()
            document.add(record, number: line)
            if !document.isClosed {
                open = document
                return
            }
        }
        if record.count > maximumRecordBytes { record.removeSubrange(maximumRecordBytes...) }
        try emitRecord(record, at: line, emit: emit)
    }

    /// Emits what line `number` holds (a line, or a document joined from the lines it opened): a JSON array's
    /// elements, each a record at that line, as a `.json` file's array is read (a batch a logger wrote on one
    /// line); any other value as one record. An array that is cut off (a line cut short, a document that never
    /// closed) stays one record, which the parser quarantines whole.
    private func emitRecord(_ bytes: [UInt8], at number: Int64, emit: (RawRecord) throws -> Void) throws {
        let provenance = Provenance(file: file, member: member, position: number)
        guard bytes.first(where: { !JSONDocumentSplitter.isWhitespace($0) }) == UInt8(ascii: "["),
              let elements = arrayElements(bytes) else {
            try emit(RawRecord(bytes: bytes, provenance: provenance))
            return
        }
        for element in elements { try emit(RawRecord(bytes: element, provenance: provenance)) }
    }

    /// The elements of the JSON array `bytes` as ``JSONDocumentSplitter`` finds them (from a byte that breaks
    /// the array's structure, the rest is one element, quarantined as malformed); `nil` when it is cut off.
    private func arrayElements(_ bytes: [UInt8]) -> [[UInt8]]? {
        var splitter = JSONDocumentSplitter(file: file, member: member, maximumRecordBytes: maximumRecordBytes)
        var elements: [[UInt8]] = []
        var damages: [Damage] = []
        let origin = ChunkOrigin(offset: 0, linear: false)
        do {
            try bytes.withUnsafeBytes { chunk in
                try splitter.write(chunk, origin: origin, damages: &damages) { elements.append($0.bytes) }
            }
            try splitter.finish(origin: origin, damages: &damages) { elements.append($0.bytes) }
        } catch {
            return nil
        }
        return damages.isEmpty ? elements : nil
    }

    /// Whether `line` may open a document that goes on over the next lines: it starts an object or array and
    /// does not end one. A record on one line ends with `}` (checked first: one byte for nearly every line).
    private static func mayOpenDocument(_ line: [UInt8]) -> Bool {
        guard let last = line.last(where: { !JSONDocumentSplitter.isWhitespace($0) }),
              last != UInt8(ascii: "}"), last != UInt8(ascii: "]"),
              let first = line.first(where: { !JSONDocumentSplitter.isWhitespace($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Yields the open document, if any (``yield(_:emit:)``).
    private mutating func closeOpenDocument(emit: (RawRecord) throws -> Void) throws {
        guard let document = open.take() else { return }
        try yield(document, emit: emit)
    }

    /// Yields `document`: one record at the line that opened it when it closed, else each of its lines as a
    /// record of its own.
    private func yield(_ document: OpenDocument, emit: (RawRecord) throws -> Void) throws {
        guard let first = document.lines.first else { return }
        if document.isClosed {
            try emitRecord(document.joined, at: first.number, emit: emit)
            return
        }
        for (number, bytes) in document.lines { try emitRecord(bytes, at: number, emit: emit) }
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
