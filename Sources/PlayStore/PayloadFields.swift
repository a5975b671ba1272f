import Facts
import Ingest

/// Why a Google payload (or a part of it) cannot be used: a field of the wrong type, a required field missing
/// (`invalid_payload`), or a time outside the plausible window (`implausible_timestamp`). ``detail`` names the
/// field by its path.
struct PayloadError: Error, Sendable {
    var reason: QuarantineReason = .invalidPayload
    var detail: String
}

/// Typed, tolerant access to the members of one payload object. Absent and `null` members read as `nil`;
/// containers are read leniently (`JSON.elements(_:path:)`, `JSON.container(_:path:)`: `{}`, `[]` and `null`
/// are empty); a member of the wrong shape (an object where an int64 string belongs) throws, naming its path.
/// Every time is checked against ``times``.
struct PayloadFields {
    let json: JSON
    /// The dotted path of this object inside the payload, for error details (`""` for the root).
    let path: String
    /// The instants a payload may state.
    let times: PlausibleTimes

    init(_ json: JSON, path: String = "", times: PlausibleTimes) {
        self.json = json
        self.path = path
        self.times = times
    }

    func name(_ key: String) -> String { JSON.path(path, key) }

    private func member(_ key: String) -> JSON? {
        guard let value = json[key], !value.isNull else { return nil }
        return value
    }

    /// An int64 sent as a number or a numeric string (Google sends int64 fields as strings).
    func int64(_ key: String) throws(PayloadError) -> Int64? {
        guard let value = member(key) else { return nil }
        if case .string(let s) = value, s.isEmpty { return nil }
        if let n = value.integer { return n }
        throw PayloadError(detail: "\(name(key)) is not an integer: \(JSONWriter.compact(value).prefix(80))")
    }

    /// An amount in micros of a currency unit (`priceAmountMicros`, `introductoryPriceAmountMicros`): never
    /// negative, as no charge is; a negative one is garbage that would reduce revenue.
    func micros(_ key: String) throws(PayloadError) -> Int64? {
        guard let value = try int64(key) else { return nil }
        guard value >= 0 else { throw PayloadError(detail: "\(name(key)) is negative: \(value)") }
        guard value <= Fact.largestAmountMicros else {
            throw PayloadError(detail: "\(name(key)) is \(value), more than any store charges")
        }
        return value
    }

    /// A count of units (`quantity`, `voidedQuantity`) from 1 to 1,000: far beyond what Play sells in one
    /// purchase, a value is garbage, and multiplying a list price by it would invent revenue.
    func quantity(_ key: String) throws(PayloadError) -> Int64? {
        guard let value = try int64(key) else { return nil }
        guard (1...1_000).contains(value) else {
            throw PayloadError(detail: "\(name(key)) is \(value), not a count from 1 to 1000")
        }
        return value
    }

    func requiredInt64(_ key: String) throws(PayloadError) -> Int64 {
        guard let value = try int64(key) else { throw PayloadError(detail: "\(name(key)) is missing") }
        return value
    }

    /// An epoch-milliseconds time (`*Millis`, int64 as a number or a string), inside ``times``. A store field
    /// named for milliseconds is never reread as seconds: a value below 10^11 is 1970–1973, before any store
    /// sold anything, and is quarantined like every other implausible time.
    func millis(_ key: String) throws(PayloadError) -> Millis? {
        guard let value = try int64(key) else { return nil }
        return try plausible(value, key)
    }

    func requiredMillis(_ key: String) throws(PayloadError) -> Millis {
        guard let value = try millis(key) else { throw PayloadError(detail: "\(name(key)) is missing") }
        return value
    }

    /// An RFC 3339 timestamp in ms UTC, inside ``times``.
    func time(_ key: String) throws(PayloadError) -> Millis? {
        guard let text = try string(key) else { return nil }
        guard let millis = RFC3339.millis(text) else {
            throw PayloadError(detail: "\(name(key)) is not an RFC 3339 time: \(text.prefix(80))")
        }
        return try plausible(millis, key)
    }

    private func plausible(_ instant: Millis, _ key: String) throws(PayloadError) -> Millis {
        guard times.contains(instant) else {
            throw PayloadError(reason: .implausibleTimestamp, detail: times.detail(field: name(key), instant: instant))
        }
        return instant
    }

    /// A string (or a number's text); `nil` for an absent or empty member.
    func string(_ key: String) throws(PayloadError) -> String? {
        guard let value = member(key) else { return nil }
        switch value {
        case .string(let s): return s.isEmpty ? nil : s
        case .number(let n): return n
        default: throw PayloadError(detail: "\(name(key)) is not a string: \(JSONWriter.compact(value).prefix(80))")
        }
    }

    func requiredString(_ key: String) throws(PayloadError) -> String {
        guard let value = try string(key) else { throw PayloadError(detail: "\(name(key)) is missing") }
        return value
    }

    func bool(_ key: String) throws(PayloadError) -> Bool? {
        guard let value = member(key) else { return nil }
        guard let b = value.bool else {
            throw PayloadError(detail: "\(name(key)) is not a boolean: \(JSONWriter.compact(value).prefix(80))")
        }
        return b
    }

    /// A nested object, read leniently (`null` absent; `{}` and `[]` an empty object, as Google's marker objects
    /// `testPurchase: {}` are, and as PHP logs them).
    func object(_ key: String) throws(PayloadError) -> PayloadFields? {
        do throws(FieldError) {
            guard let value = try json.container(key, path: path) else { return nil }
            return PayloadFields(value, path: name(key), times: times)
        } catch {
            throw PayloadError(detail: error.detail)
        }
    }

    /// The elements of an array member, read leniently (missing, `null`, `[]` and `{}` are none), each with its
    /// path; an element is made a ``PayloadFields`` by ``element(_:)``, so that one bad element can be set aside
    /// while the others are read.
    func elements(_ key: String) throws(PayloadError) -> [(path: String, value: JSON)] {
        do throws(FieldError) {
            return try json.elements(key, path: path)
        } catch {
            throw PayloadError(detail: error.detail)
        }
    }

    /// An element of ``elements(_:)`` as an object.
    func element(_ element: (path: String, value: JSON)) throws(PayloadError) -> PayloadFields {
        guard case .object = element.value else {
            throw PayloadError(detail: "\(element.path) is a JSON \(JSON.typeName(element.value)), not an object")
        }
        return PayloadFields(element.value, path: element.path, times: times)
    }

    func has(_ key: String) -> Bool { member(key) != nil }

    /// Whether a marker message is set: Google sends one as an object (`testPurchase: {}`, `freeTrial: {}`), so an
    /// object (or `[]`) is set and absent or `null` is not; a backend that mapped it to a boolean wrote `true` or
    /// `false` (also as `"false"`, `0`), read as such. Any other value is an error naming the field.
    func marker(_ key: String) throws(PayloadError) -> Bool {
        guard let value = member(key) else { return false }
        switch value {
        case .object, .array: return try object(key) != nil
        default:
            guard let set = value.bool else {
                throw PayloadError(detail: "\(name(key)) is neither an object nor a boolean: \(JSONWriter.compact(value).prefix(80))")
            }
            return set
        }
    }
}

/// The unusable parts of one record, collected while its usable parts are read.
struct PartList {
    private(set) var parts: [QuarantinedPart] = []

    /// Runs `read` on the part at `path` (holding `value`); when it throws, the part is set aside with the
    /// error's reason and detail and `nil` is returned.
    mutating func read<T>(_ path: String, _ value: JSON?, _ read: () throws(PayloadError) -> T?) -> T? {
        do throws(PayloadError) {
            return try read()
        } catch {
            setAside(path, value, error)
            return nil
        }
    }

    /// Sets the part at `path` (holding `value`) aside, for `error`'s reason and detail.
    mutating func setAside(_ path: String, _ value: JSON?, _ error: PayloadError) {
        parts.append(QuarantinedPart(path: path, reason: error.reason, detail: error.detail,
                                     raw: Array(JSONWriter.compact(value ?? .null).utf8)))
    }

    /// `facts` used with the parts set aside; a record whose every unit failed (no fact left) is quarantined
    /// whole, with the first part's reason: nothing of it was usable.
    func translation(_ facts: [Fact]) -> Translation {
        if facts.isEmpty, let first = parts.first { return .quarantined(first.reason, detail: first.detail) }
        return .used(facts, parts: parts)
    }
}
