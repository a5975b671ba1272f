import Facts

/// A byte-level JSON parser (RFC 8259) into ``JSON``.
///
/// Written for this pipeline's hot path: records are parsed straight from the decompressed bytes with no
/// intermediate `Data` or `String`, and no Foundation boxing. Nesting is limited to ``maximumDepth`` so that a
/// hostile record cannot exhaust the stack.
///
/// Strict where leniency would change what a record says (RFC 8259 §8.1, §4):
/// - a string that is not valid UTF-8 (or escapes an unpaired surrogate) is an error of kind
///   ``JSONParseError/Kind/invalidUTF8``, never repaired with U+FFFD: repairing would make two different
///   purchase tokens one;
/// - an object with a member name twice is an error of kind ``JSONParseError/Kind/duplicateKey``: parsers
///   disagree on which one wins, so the record has no single meaning.
/// Both errors name the member path where they were found (`receipt.in_app[2].transaction_id`).
public struct JSONParser {
    /// Deepest nesting accepted; store payloads nest fewer than ten levels.
    public static let maximumDepth = 512

    /// The most memory (bytes, estimated) the values of one JSON text may take once parsed. A value's tree takes
    /// many times its text (an 8-byte `{"b":1}` reserves room for 8 members), so a record of a few megabytes of
    /// tiny values would take gigabytes; the largest store records (a receipt of years of renewals, a Pub/Sub
    /// pull of 1,000 messages) take a few. A text past it is an error, quarantined with its record, and the
    /// parser stops there, so that memory stays flat whatever an archive holds.
    public static let memoryBudget = 32 * 1024 * 1024

    /// Parses one complete JSON text; surrounding whitespace is allowed, anything else after the value is not.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSON {
        let result: Result<JSON, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(JSONParseError) { return .success(try parse(buffer: buffer)) } catch { return .failure(error) }
        }
        if let result { return try result.get() }
        let array = Array(bytes)
        let copied: Result<JSON, JSONParseError> = array.withUnsafeBufferPointer { buffer in
            do throws(JSONParseError) { return .success(try parse(buffer: buffer)) } catch { return .failure(error) }
        }
        return try copied.get()
    }

    /// Parses a string holding JSON (an escaped `body`, a decoded JWS payload).
    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }

    /// `budget`: ``memoryBudget``, smaller in tests.
    static func parse(buffer: UnsafeBufferPointer<UInt8>, budget: Int = memoryBudget) throws(JSONParseError) -> JSON {
        var reader = Reader(bytes: buffer, budget: budget)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == buffer.count else { throw JSONParseError(offset: reader.index, message: "unexpected text after the value") }
        return value
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// What is left of the budget (``JSONParser/memoryBudget``): each value charges its slot, an object or array
        /// the room reserved for its members, a string or number longer than Swift keeps inline its bytes.
        var budget: Int
        let initialBudget: Int

        init(bytes: UnsafeBufferPointer<UInt8>, budget: Int) {
            self.bytes = bytes
            self.budget = budget
            initialBudget = budget
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        func fail(_ message: String) -> JSONParseError { JSONParseError(offset: index, message: message) }

        func duplicate(_ key: String, at offset: Int) -> JSONParseError {
            JSONParseError(offset: offset, message: "the member \"\(key)\" appears twice", kind: .duplicateKey, member: key)
        }

        mutating func value(depth: Int) throws(JSONParseError) -> JSON {
            guard depth < JSONParser.maximumDepth else { throw fail("nesting deeper than \(JSONParser.maximumDepth)") }
            guard index < bytes.count else { throw fail("unexpected end of input") }
            budget -= 24
            switch bytes[index] {
            case UInt8(ascii: "{"): budget -= 384
            case UInt8(ascii: "["): budget -= 128
            default: break
            }
            guard budget >= 0 else {
                throw fail("too large to read: its values would take more than \(initialBudget >> 20) MiB of memory "
                           + "(a store record takes a few); split it into records")
            }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try charged(string()))
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try charged(number()))
            default: throw fail("unexpected character")
            }
        }

        /// `text`, its bytes charged to the budget when Swift cannot keep it inline (more than 15).
        mutating func charged(_ text: String) -> String {
            let count = text.utf8.count
            if count > 15 { budget -= count + 32 }
            return text
        }

        mutating func literal(_ word: StaticString) throws(JSONParseError) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw fail("unexpected end of input") }
            let start = word.utf8Start
            for offset in 0..<count where bytes[index + offset] != start[offset] { throw fail("invalid literal") }
            index += count
        }

        mutating func object(depth: Int) throws(JSONParseError) -> JSON {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject())
            }
            var object = JSONObject(capacity: 8)
            var names = MemberNames()
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let keyStart = index
                let key = try charged(string())
                guard names.insert(key, into: object) else { throw duplicate(key, at: keyStart) }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                do {
                    object.append(key, try value(depth: depth + 1))
                } catch {
                    throw error.inside(key)
                }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end of input in an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
                throw fail("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(JSONParseError) -> JSON {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array([])
            }
            var elements: [JSON] = []
            elements.reserveCapacity(4)
            while true {
                skipWhitespace()
                do {
                    elements.append(try value(depth: depth + 1))
                } catch {
                    throw error.inside("[\(elements.count)]")
                }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end of input in an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw fail("expected ',' or ']'")
            }
        }

        mutating func number() throws(JSONParseError) -> String {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { throw fail("incomplete number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if isDigit(bytes[index]) {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            } else {
                throw fail("invalid number")
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid fraction") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid exponent") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func string() throws(JSONParseError) -> String {
            index += 1
            let start = index
            // Fast path: no escapes. Eight bytes at a time while none of them is a quote, a backslash or a control
            // character, noting any byte above 0x7F: an all-ASCII string (nearly all of them) needs no UTF-8
            // validation, and signed payloads (JWS) run to kilobytes.
            var ascii = true
            while true {
                ascii = skipPlainWords(ascii: ascii)
                guard index < bytes.count else { break }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    let text = ascii ? String(decoding: raw, as: UTF8.self) : try validated(raw, start: start)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw fail("control character in a string") }
                if byte >= 0x80 { ascii = false }
                index += 1
            }
            var scalars: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = try scalars.withUnsafeBufferPointer { buffer throws(JSONParseError) in
                        try self.validated(buffer, start: start)
                    }
                    index += 1
                    return text
                }
                if byte < 0x20 { throw fail("control character in a string") }
                if byte != UInt8(ascii: "\\") {
                    scalars.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(0x22)
                case UInt8(ascii: "\\"): scalars.append(0x5C)
                case UInt8(ascii: "/"): scalars.append(0x2F)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    let escapeStart = index - 2
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), index + 1 < bytes.count,
                       bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw JSONParseError(offset: escapeStart, message: "a \\u escape of a high surrogate not followed by a low one", kind: .invalidUTF8)
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else {
                        throw JSONParseError(offset: escapeStart, message: "a \\u escape of an unpaired surrogate", kind: .invalidUTF8)
                    }
                    scalars.append(contentsOf: String(scalar).utf8)
                default: throw fail("invalid escape")
                }
            }
            throw fail("unterminated string")
        }

        /// Moves ``index`` over whole 8-byte words with no `"`, `\\` or control character (SWAR tests: a flagged
        /// word may hold none, never the reverse; it is then walked byte by byte).
        /// - Returns: `ascii`, cleared when a word passed over has a byte above 0x7F.
        mutating func skipPlainWords(ascii: Bool) -> Bool {
            guard let base = bytes.baseAddress else { return ascii }
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let high: UInt64 = 0x8080_8080_8080_8080
            var ascii = ascii
            while index + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                if special & high != 0 { break }
                if word & high != 0 { ascii = false }
                index += 8
            }
            return ascii
        }

        /// The text of a string's bytes (unescaped) that may hold non-ASCII bytes; `start` is where the string
        /// begins in the input, for the error.
        func validated(_ buffer: UnsafeBufferPointer<UInt8>, start: Int) throws(JSONParseError) -> String {
            guard let text = String(validating: buffer, as: UTF8.self) else { throw invalidUTF8(buffer, start: start) }
            return text
        }

        /// The error for a string whose bytes are not valid UTF-8, at the first bad byte: `start` plus the valid
        /// bytes before it (for a string with escapes, counted after unescaping).
        func invalidUTF8(_ buffer: UnsafeBufferPointer<UInt8>, start: Int) -> JSONParseError {
            var offset = start
            var iterator = buffer.makeIterator()
            var decoder = Unicode.UTF8()
            var consumed = 0
            decoding: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): consumed += UTF8.width(scalar)
                case .emptyInput: break decoding
                case .error:
                    offset = start + consumed
                    break decoding
                }
            }
            return JSONParseError(offset: offset, message: "a string that is not valid UTF-8", kind: .invalidUTF8)
        }

        mutating func hex4() throws(JSONParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("incomplete \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail("invalid \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}

/// The member names of the object being parsed, for the duplicate check at a cost the hot path does not feel.
///
/// A 64-bit filter keyed by each name's length and last byte answers "new" for nearly every name of a store
/// payload without comparing strings; only when its bit is already set are the names searched. Past 64
/// members the filter is full, so a hash set takes over: a hostile object of 100,000 members costs linear
/// time, not quadratic.
struct MemberNames {
    private var filter: UInt64 = 0
    private var set: Set<String>?

    /// Notes `key`, a member of `object` (the members so far); `false` when `object` already has it.
    mutating func insert(_ key: String, into object: JSONObject) -> Bool {
        if set != nil { return set!.insert(key).inserted }
        if object.count >= 64 {
            set = Set(object.keys)
            return set!.insert(key).inserted
        }
        let utf8 = key.utf8
        let bit = UInt64(1) << (UInt64(truncatingIfNeeded: utf8.count &* 7 &+ Int(utf8.last ?? 0)) & 63)
        defer { filter |= bit }
        return filter & bit == 0 || object[key] == nil
    }
}

/// Why a JSON text could not be parsed, and where (byte offset within the text).
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is: each is quarantined for its own reason (``quarantineReason``).
    public enum Kind: Sendable, Hashable {
        /// Not JSON.
        case syntax
        /// Well-formed JSON whose string holds bytes that are not UTF-8, or escapes an unpaired surrogate.
        case invalidUTF8
        /// An object names a member twice.
        case duplicateKey
    }

    public var offset: Int
    public var message: String
    public var kind: Kind
    /// Where in the document it was found, as a member path (`data.signedTransactionInfo`, `in_app[2].x`);
    /// `nil` for syntax errors and at the top level.
    public var member: String?

    public init(offset: Int, message: String, kind: Kind = .syntax, member: String? = nil) {
        self.offset = offset
        self.message = message
        self.kind = kind
        self.member = member
    }

    /// The quarantine reason for a record that fails this way.
    public var quarantineReason: QuarantineReason {
        switch kind {
        case .syntax: .malformedJSON
        case .invalidUTF8: .invalidUTF8
        case .duplicateKey: .duplicateKey
        }
    }

    public var description: String {
        switch kind {
        case .syntax: "invalid JSON at byte \(offset): \(message)"
        case .invalidUTF8, .duplicateKey: "\(message) at byte \(offset)" + (member.map { " (member \($0))" } ?? "")
        }
    }

    /// The error as seen from the object member or array element `step` that holds where it happened.
    func inside(_ step: String) -> JSONParseError {
        guard kind != .syntax else { return self }
        var error = self
        error.member = member.map { step + ($0.hasPrefix("[") ? "" : ".") + $0 } ?? step
        return error
    }
}
