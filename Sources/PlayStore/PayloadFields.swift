import Ingest

/// Why a Google payload cannot be used: a field of the wrong type or a required field missing. Becomes
/// `.quarantined(.invalidPayload, detail:)` with ``detail`` naming the field.
struct PayloadError: Error, Sendable {
    var detail: String
}

/// Typed, tolerant access to the members of one payload object. Absent and `null` members read as `nil`;
/// a member of the wrong shape (an object where an int64 string belongs) throws, naming its path.
struct PayloadFields {
    let json: JSON
    /// The dotted path of this object inside the payload, for error details (`""` for the root).
    let path: String

    init(_ json: JSON, path: String = "") {
        self.json = json
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func member(_ key: String) -> JSON? {
        guard let value = json[key], !value.isNull else { return nil }
        return value
    }

    /// An int64 sent as a number or a numeric string (Google sends int64 fields as strings).
    func int64(_ key: String) throws(PayloadError) -> Int64? {
        guard let value = member(key) else { return nil }
        if case .string(let s) = value, s.isEmpty { return nil }
        switch value {
        case .number, .string:
            if let n = value.int64 { return n }
        default:
            break
        }
        throw PayloadError(detail: "\(name(key)) is not an integer: \(JSONWriter.compact(value).prefix(80))")
    }

    func requiredInt64(_ key: String) throws(PayloadError) -> Int64 {
        guard let value = try int64(key) else { throw PayloadError(detail: "\(name(key)) is missing") }
        return value
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

    /// An RFC 3339 timestamp in ms UTC.
    func time(_ key: String) throws(PayloadError) -> Int64? {
        guard let text = try string(key) else { return nil }
        guard let millis = RFC3339.millis(text) else {
            throw PayloadError(detail: "\(name(key)) is not an RFC 3339 time: \(text.prefix(80))")
        }
        return millis
    }

    /// A nested object (possibly empty, as Google's marker objects `testPurchase: {}` are).
    func object(_ key: String) throws(PayloadError) -> PayloadFields? {
        guard let value = member(key) else { return nil }
        guard case .object = value else {
            throw PayloadError(detail: "\(name(key)) is not an object: \(JSONWriter.compact(value).prefix(80))")
        }
        return PayloadFields(value, path: name(key))
    }

    func array(_ key: String) throws(PayloadError) -> [PayloadFields]? {
        guard let value = member(key) else { return nil }
        guard case .array(let elements) = value else {
            throw PayloadError(detail: "\(name(key)) is not an array: \(JSONWriter.compact(value).prefix(80))")
        }
        var result: [PayloadFields] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .object = element else { throw PayloadError(detail: "\(name(key))[\(index)] is not an object") }
            result.append(PayloadFields(element, path: "\(name(key))[\(index)]"))
        }
        return result
    }

    func has(_ key: String) -> Bool { member(key) != nil }
}
