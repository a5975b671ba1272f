/// A parsed JSON value, tolerant accessors included: the stores send numbers as strings and booleans as
/// `"true"`, `"1"` or `true`, so every accessor accepts each spelling.
///
/// Numbers keep their source text (``number(_:)``): int64 values such as expiry times in milliseconds
/// or transaction ids survive untouched, and the canonical form used for deduplication is stable.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, as written in the source.
    case number(String)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The member `key` of an object; `nil` for a missing member or a non-object.
    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The member at a path of keys.
    public subscript(path: String...) -> JSON? {
        var current: JSON? = self
        for key in path { current = current?[key] }
        return current
    }

    /// A string, or a number's text; `nil` for null and anything else.
    public var string: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return n
        default: return nil
        }
    }

    /// A non-empty string (many store fields are `""` when absent).
    public var nonEmptyString: String? {
        guard let s = string, !s.isEmpty else { return nil }
        return s
    }

    /// An integer from a number or a numeric string (`"1700000000000"`, `1.7e12` and `"12.0"` included), or a
    /// boolean as 1 or 0.
    public var int64: Int64? {
        if case .bool(let b) = self { return b ? 1 : 0 }
        return integer
    }

    /// An integer from a number or a numeric string only, as ``int64`` reads them: never from a boolean (what a
    /// count or a time must be).
    public var integer: Int64? {
        switch self {
        case .number(let text), .string(let text):
            let trimmed = text.trimmingASCIIWhitespace()
            if let value = Int64(trimmed) { return value }
            if let value = Double(trimmed), value.isFinite, abs(value) < 9.2e18, value == value.rounded() {
                return Int64(value)
            }
            return nil
        default: return nil
        }
    }

    /// A floating-point value from a number or a numeric string.
    public var double: Double? {
        switch self {
        case .number(let text), .string(let text): return Double(text.trimmingASCIIWhitespace())
        default: return nil
        }
    }

    /// A boolean from `true`/`false`, `"true"`/`"false"`, `1`/`0` or `"1"`/`"0"` (any case); `nil` otherwise.
    public var bool: Bool? {
        switch self {
        case .bool(let b): return b
        case .number(let n): return n == "1" ? true : (n == "0" ? false : nil)
        case .string(let s):
            switch s.lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: return nil
            }
        default: return nil
        }
    }

    public var array: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var object: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// The members of a JSON object in source order. Lookup is linear, which beats hashing for the few dozen
/// members a store payload has. A parsed object never names a member twice (``JSONParser`` refuses it); one
/// built with a repeated key resolves it to the last occurrence.
public struct JSONObject: Sendable, Hashable {
    public private(set) var keys: [String]
    public private(set) var values: [JSON]

    /// An empty object.
    public init() {
        keys = []
        values = []
    }

    /// An empty object with room for `capacity` members: the parser starts every object so, since growing from
    /// nothing reallocates both arrays at 1, 2, 4 and 8 members (a third of parsing time went to that).
    init(capacity: Int) {
        keys = []
        values = []
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// An object with `members` in the given order.
    public init(_ members: [(String, JSON)]) {
        keys = members.map(\.0)
        values = members.map(\.1)
    }

    public var count: Int { keys.count }

    public subscript(key: String) -> JSON? {
        // Lengths first: a native string knows its UTF-8 count, and most members of a scan differ in length, so
        // the full comparison (which goes through Unicode-aware paths) runs about once per lookup.
        let length = key.utf8.count
        var index = keys.count - 1
        while index >= 0 {
            if keys[index].utf8.count == length && keys[index] == key { return values[index] }
            index -= 1
        }
        return nil
    }

    /// Adds a member at the end (a repeated key then wins on lookup, as in parsed input).
    public mutating func append(_ key: String, _ value: JSON) {
        keys.append(key)
        values.append(value)
    }

    public var members: Zip2Sequence<[String], [JSON]> { zip(keys, values) }
}

extension String {
    func trimmingASCIIWhitespace() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" || first == "\n" || first == "\r" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\n" || last == "\r" { slice.removeLast() }
        return slice
    }
}

extension Int64 {
    init?(_ text: Substring) { self.init(String(text)) }
}

extension Double {
    init?(_ text: Substring) { self.init(String(text)) }
}
