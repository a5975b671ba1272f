/// A member of a payload that cannot be read, named by its path; the store translators turn it into the
/// quarantine reason of the record, or of the part of the record it belongs to.
public struct FieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The member's path: names joined by `.`, array indexes in brackets (`unified_receipt.latest_receipt_info[2]`).
    public var field: String
    /// What is wrong with it, starting with the field's path.
    public var detail: String

    public init(field: String, detail: String) {
        self.field = field
        self.detail = detail
    }

    public var description: String { detail }
}

/// Optional array and object members read leniently: the one rule every translator applies to every container
/// member of every payload (`inputs.md`: "an array field sent as `{}` or `null`").
///
/// Loggers and languages blur the empty containers: PHP writes an empty map as `[]` and an empty list as `{}`,
/// some serialisers write `null` for an empty list, and older store payloads put a single object where later
/// ones put an array of one. So an empty container, `null` and a missing member all mean "nothing here", a
/// single object where an array belongs is that array's one element, and only a non-empty container of the other
/// kind or a scalar (a string, a number, a boolean) is unreadable, reported as a ``FieldError`` naming the
/// member, so that the caller quarantines the smallest part that holds it and reads the rest.
extension JSON {
    /// The path of member `key` of the object at `path` (`""` is the payload's root).
    public static func path(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// The elements of the optional array member `key`, each with its path (`path.key[i]`): missing, `null`, `[]`
    /// and `{}` are none; a non-empty object is the one element (its path without an index).
    /// - Throws: ``FieldError`` when the member is a string, number or boolean.
    public func elements(_ key: String, path: String = "") throws(FieldError) -> [(path: String, value: JSON)] {
        let name = JSON.path(path, key)
        switch self[key] {
        case nil, .null?:
            return []
        case .array(let elements)?:
            return elements.enumerated().map { ("\(name)[\($0.offset)]", $0.element) }
        case .object(let object)?:
            return object.count == 0 ? [] : [(name, .object(object))]
        case let value?:
            throw FieldError(field: name, detail: "\(name) is a JSON \(JSON.typeName(value)), not an array")
        }
    }

    /// The optional object member `key`: `nil` when missing or `null`; an empty object when `{}` or `[]` (a store's
    /// marker objects, `testPurchase: {}`, mean something by being there, and PHP logs them as `[]`).
    /// - Throws: ``FieldError`` when the member is a non-empty array, a string, a number or a boolean.
    public func container(_ key: String, path: String = "") throws(FieldError) -> JSON? {
        let name = JSON.path(path, key)
        switch self[key] {
        case nil, .null?:
            return nil
        case .object?:
            return self[key]
        case .array(let elements)? where elements.isEmpty:
            return .object(JSONObject())
        case let value?:
            throw FieldError(field: name, detail: "\(name) is a JSON \(JSON.typeName(value)), not an object")
        }
    }

    /// `null`, `boolean`, `number`, `string`, `array` or `object`: for details that say what was found.
    public static func typeName(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
