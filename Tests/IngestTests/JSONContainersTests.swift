import Testing
@testable import Ingest

/// The one lenient rule for container members (inputs.md: "an array field sent as `{}` or `null`"), which every
/// translator applies to every array and object member of every payload.
@Suite struct JSONContainersTests {
    static let payload = try? JSONParser.parse(#"""
        {"empty_object": {}, "empty_array": [], "null": null, "list": [{"a": 1}, "x"], "single": {"transaction_id": "1"},
         "text": "n/a", "number": 7, "flag": true, "marker": {}, "php_marker": [], "full": {"b": 2}, "wrong": [1]}
        """#)

    @Test func emptyNullAndMissingArraysHaveNoElements() throws {
        let payload = try #require(Self.payload)
        for key in ["empty_object", "empty_array", "null", "missing"] {
            #expect(try payload.elements(key).isEmpty, "\(key)")
        }
    }

    @Test func elementsCarryTheirPaths() throws {
        let payload = try #require(Self.payload)
        let list = try payload.elements("list", path: "unified_receipt")
        #expect(list.map(\.path) == ["unified_receipt.list[0]", "unified_receipt.list[1]"])
        #expect(list.last?.value == .string("x"))
        // A single object where an array belongs (the iOS 6 receipt shape) is its one element.
        let single = try payload.elements("single")
        #expect(single.map(\.path) == ["single"] && single.first?.value["transaction_id"] == .string("1"))
    }

    @Test(arguments: ["text", "number", "flag"])
    func aScalarWhereAnArrayBelongsNamesTheField(_ key: String) throws {
        let payload = try #require(Self.payload)
        #expect(throws: FieldError.self) { try payload.elements(key, path: "data") }
        do {
            _ = try payload.elements(key, path: "data")
        } catch {
            #expect(error.field == "data.\(key)")
            #expect(error.detail.hasPrefix("data.\(key) is a JSON "))
        }
    }

    @Test func objectsAreReadLenientlyToo() throws {
        let payload = try #require(Self.payload)
        #expect(try payload.container("null") == nil && payload.container("missing") == nil)
        // An empty marker object means something by being there, however it was spelled.
        #expect(try payload.container("marker") == .object(JSONObject()))
        #expect(try payload.container("php_marker") == .object(JSONObject()))
        #expect(try payload.container("full")?["b"] == .number("2"))
        for key in ["wrong", "text", "number", "flag"] {
            #expect(throws: FieldError.self, "\(key)") { try payload.container(key) }
        }
    }
}
