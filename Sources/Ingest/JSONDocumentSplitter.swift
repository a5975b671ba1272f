/// Splits JSON text laid out as documents into records: each element of a top-level array, streamed element by
/// element so that a large array never sits in memory, and each other top-level value (one document, or
/// pretty-printed documents one after another). Top-level values may follow one another in any mix: a batch
/// array after a batch array (a logger's arrays one per line) gives the elements of both.
///
/// The splitter does not parse: it tracks only string, escape and nesting state, which is enough to find where
/// a value ends; ``RecordParser`` parses each value later. Positions are 0-based element or document indexes
/// (0 for a single document).
///
/// A file that is not valid JSON as a whole still gives up what it can: complete elements are yielded; from the
/// first byte that breaks the array's structure, the rest is yielded as one record (it will be quarantined as
/// malformed). Among top-level documents, a run of something that starts no object, array or string (a garbage
/// line, a bare word) is one record, to the end of its line or the next value on it: not a record per word. A
/// document that ends inside a value or before its array is closed was cut off: that is damage.
struct JSONDocumentSplitter: StreamStage {
    let file: String
    let member: String?
    let maximumRecordBytes: Int

    private enum State {
        /// Before the first value (whitespace, byte order mark).
        case start
        /// Between top-level values (after a document, or after an array's `]`), expecting another or the end.
        case betweenDocuments
        /// Inside the array, expecting an element or `]`.
        case beforeElement
        /// Inside an element of an array (``inArray``), or inside a top-level document.
        case element
        /// Inside a top-level value that starts with neither `{`, `[` nor `"` (a garbage line, a bare word or
        /// number): it runs to the end of its line, or to an object, array or string that starts on it, one
        /// record however many words it holds.
        case line
        /// After an element, expecting `,` or `]`.
        case afterElement
        /// The structure broke; everything from here on is one record.
        case broken
    }

    private var state = State.start
    /// The value being read is an element of a top-level array (else a top-level document).
    private var inArray = false
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var index: Int64 = 0
    /// Bytes of the current element (or document, or broken rest) from earlier chunks.
    private var buffer: [UInt8] = []

    init(file: String, member: String?, maximumRecordBytes: Int) {
        self.file = file
        self.member = member
        self.maximumRecordBytes = maximumRecordBytes
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        let bytes = chunk.assumingMemoryBound(to: UInt8.self)
        var position = 0
        /// Where the value being collected starts in this chunk, if it is being collected.
        var valueStart: Int? = (state == .element || state == .line || state == .broken) ? 0 : nil
        while position < bytes.count {
            let byte = bytes[position]
            switch state {
            case .start, .betweenDocuments:
                if Self.isWhitespace(byte) || (state == .start && (byte == 0xEF || byte == 0xBB || byte == 0xBF)) {
                    position += 1
                } else if byte == UInt8(ascii: "[") {
                    state = .beforeElement
                    inArray = true
                    position += 1
                } else {
                    startDocument(at: position, byte, &valueStart)
                }
            case .line:
                // To the end of the line, or to a value that starts after it on the same line.
                guard let end = bytes[position...].firstIndex(where: Self.endsLine) else {
                    position = bytes.count
                    continue
                }
                try yield(bytes, from: valueStart ?? 0, to: end, emit: emit)
                valueStart = nil
                state = .betweenDocuments
                position = bytes[end] == 0x0A || bytes[end] == 0x0D ? end + 1 : end
            case .beforeElement:
                if Self.isWhitespace(byte) {
                    position += 1
                } else if byte == UInt8(ascii: "]") {
                    state = .betweenDocuments
                    inArray = false
                    position += 1
                } else if byte == UInt8(ascii: ",") {
                    state = .broken
                    valueStart = position
                } else {
                    startValue(at: position, &valueStart)
                }
            case .element:
                // Bytes that change nothing (inside a string, or nested and structural-free) are skipped in a
                // tight loop: the byte-by-byte state machine was 5% of ingest's CPU time.
                let skipped = skipInert(bytes, from: position)
                if skipped > position {
                    position = skipped
                    continue
                }
                if inString || depth > 0 || !Self.endsScalar(byte) {
                    let closesTopLevel = !inString && depth == 0 && (byte == UInt8(ascii: "}"))
                    if closesTopLevel {
                        state = .broken
                        continue
                    }
                    let wasString = inString
                    track(byte)
                    position += 1
                    let atEnd = depth == 0 && !inString
                        && (byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || (wasString && byte == UInt8(ascii: "\"")))
                    if atEnd {
                        try yield(bytes, from: valueStart ?? 0, to: position, emit: emit)
                        valueStart = nil
                        state = inArray ? .afterElement : .betweenDocuments
                    }
                } else {
                    try yield(bytes, from: valueStart ?? 0, to: position, emit: emit)
                    valueStart = nil
                    state = inArray ? .afterElement : .betweenDocuments
                }
            case .afterElement:
                if Self.isWhitespace(byte) {
                    position += 1
                } else if byte == UInt8(ascii: ",") {
                    state = .beforeElement
                    position += 1
                } else if byte == UInt8(ascii: "]") {
                    state = .betweenDocuments
                    inArray = false
                    position += 1
                } else {
                    state = .broken
                    valueStart = position
                }
            case .broken:
                position = bytes.count
            }
        }
        if let valueStart { keep(UnsafeBufferPointer(rebasing: bytes[valueStart...])) }
    }

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        switch state {
        case .start, .betweenDocuments:
            return
        case .element where !inArray:
            // A scalar document ends with the text; any other value still open was cut off.
            guard depth == 0, !inString else {
                throw StageDamage(offset: origin.offset, reason: "JSON document cut off inside a value")
            }
            try yieldBuffer(emit: emit)
        case .broken, .line:
            try yieldBuffer(emit: emit)
        case .element where depth == 0 && !inString:
            throw StageDamage(offset: origin.offset, reason: "JSON array cut off after element \(index)")
        case .element:
            throw StageDamage(offset: origin.offset, reason: "JSON array cut off inside element \(index)")
        case .beforeElement, .afterElement:
            throw StageDamage(offset: origin.offset, reason: "JSON array cut off after \(index) elements")
        }
    }

    /// Begins a top-level document at `position`, whose first byte is `byte`: a value, or a line of something
    /// else (``State/line``).
    private mutating func startDocument(at position: Int, _ byte: UInt8, _ valueStart: inout Int?) {
        if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "\"") {
            startValue(at: position, &valueStart)
        } else {
            state = .line
            valueStart = position
        }
    }

    /// Begins an element or a document at `position`.
    private mutating func startValue(at position: Int, _ valueStart: inout Int?) {
        state = .element
        valueStart = position
        depth = 0
        inString = false
        escaped = false
    }

    /// The index of the first byte from `start` on that could change the element's state: inside a string
    /// (not after a backslash) only `"` and `\` matter; outside strings but nested, only `"`, brackets and
    /// braces do (an element can end only at depth 0).
    private func skipInert(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if inString {
            guard !escaped else { return start }
            index = Self.quoteOrBackslash(in: bytes, from: index)
        } else if depth > 0 {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"):
                    return index
                default:
                    index += 1
                }
            }
        }
        return index
    }

    /// The index of the first `"` or `\` in `bytes[start...]`, looking at most ``stringWindow`` bytes ahead
    /// (the index after the window when it holds neither; the callers then go on from there). With `memchr`:
    /// signed records are mostly one long base64 string (the JWS), which a byte loop walked at a fraction
    /// of the speed. The window bounds the work per call, so that a long string full of escapes far from its
    /// closing quote is not searched to its end again after every escape.
    static func quoteOrBackslash(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let limit = min(bytes.count, start + stringWindow)
        let quote = bytes.index(of: UInt8(ascii: "\""), from: start, before: limit) ?? limit
        return bytes.index(of: UInt8(ascii: "\\"), from: start, before: quote) ?? quote
    }

    /// Bytes ``quoteOrBackslash(in:from:)`` searches per call.
    static let stringWindow = 4096

    /// Follows strings, escapes and nesting through one byte.
    private mutating func track(_ byte: UInt8) {
        Self.step(byte, inString: &inString, escaped: &escaped, depth: &depth)
    }

    /// The state change one byte makes; on plain values so that the buffer loop keeps its state in registers.
    @inline(__always)
    static func step(_ byte: UInt8, inString: inout Bool, escaped: inout Bool, depth: inout Int) {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"): depth = max(depth - 1, 0)
        default: break
        }
    }

    /// Keeps bytes of an unfinished value, up to the bound: a longer value is cut there (and will not parse).
    private mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>) {
        let room = maximumRecordBytes - buffer.count
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<max(min(room, bytes.count), 0)]))
    }

    private mutating func yield(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int,
                                emit: (RawRecord) throws -> Void) throws {
        keep(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        try yieldBuffer(emit: emit)
    }

    private mutating func yieldBuffer(emit: (RawRecord) throws -> Void) throws {
        var record = buffer
        buffer = []
        while let last = record.last, Self.isWhitespace(last) { record.removeLast() }
        let position = index
        index += 1
        guard !LineSplitter.isBlank(record) else { return }
        try emit(RawRecord(bytes: record, provenance: Provenance(file: file, member: member, position: position)))
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// A byte that ends a run of something else among documents (``State/line``): a line end, or the start of
    /// an object, array or string.
    static func endsLine(_ byte: UInt8) -> Bool {
        byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "\"")
    }

    /// A byte that ends a number or literal element (`1,` `true]` `null `).
    static func endsScalar(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || isWhitespace(byte)
    }
}
