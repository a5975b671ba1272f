import Facts
import Testing
@testable import Ingest

/// Issue 18.4: "Invalid UTF-8 inside a JSON string is replaced by U+FFFD, so two different purchase tokens merge
/// into one subscription and one record is called a duplicate: quarantine `invalid_utf8` instead. An object with
/// duplicate keys (the last wins today, silently) is quarantined `duplicate_key`: two parsers can disagree on it."
/// RFC 8259 §8.1 requires UTF-8; §4 says names SHOULD be unique and that behaviour with duplicates is
/// unpredictable.
@Suite struct JSONParserTests {
    /// A Google v1 resource logged in an envelope (`inputs.md`), its purchase token with one byte that is no UTF-8.
    static func envelope(token: [UInt8]) -> [UInt8] {
        Array(#"{"received_at":"2024-03-01T12:00:00Z","source":"google.subscription.v1","package_name":"com.example.app","subscription_id":"premium_monthly","purchase_token":""#.utf8)
            + token
            + Array(#"","body":{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","paymentState":1,"orderId":"GPA.3345-1234-5678-90123"}}"#.utf8)
    }

    func parse(_ bytes: [UInt8]) -> Result<ParsedRecord, RecordRejection> {
        RecordParser(times: testTimes).parse(RawRecord(bytes: bytes, provenance: Provenance(file: "in.ndjson", position: 1)))
    }

    @Test func twoTokensThatDifferOnlyInBytesThatAreNotUTF8AreNeverOneRecord() throws {
        // Latin-1 é (0xE9) and ê (0xEA) where UTF-8 was expected: both used to read as "caf\u{FFFD}-tok".
        let first = parse(Self.envelope(token: Array("caf".utf8) + [0xE9] + Array("-tok".utf8)))
        let second = parse(Self.envelope(token: Array("caf".utf8) + [0xEA] + Array("-tok".utf8)))
        for result in [first, second] {
            guard case .failure(let rejection) = result else {
                Issue.record("accepted a token that is not UTF-8")
                continue
            }
            #expect(rejection.reason == .invalidUTF8)
            #expect(rejection.detail == "a string that is not valid UTF-8 at byte 162 (member purchase_token)")
        }
        // The same token spelled in UTF-8 is read.
        guard case .success(let record) = parse(Self.envelope(token: Array("café-tok".utf8))) else {
            Issue.record("rejected a UTF-8 token")
            return
        }
        #expect(record.envelope.purchaseToken == "café-tok")
    }

    @Test(arguments: [
        ([0xC3, 0x28], "a continuation byte missing"),
        ([0xC0, 0xAF], "an overlong encoding of /"),
        ([0xED, 0xA0, 0x80], "a surrogate encoded in three bytes (CESU-8)"),
        ([0xF4, 0x90, 0x80, 0x80], "above U+10FFFF"),
        ([0xFF], "a byte that never occurs in UTF-8"),
        ([0xE2, 0x82], "a sequence cut at the string's end"),
    ] as [([UInt8], String)])
    func invalidSequencesAreRejectedWhereTheyStart(bytes: [UInt8], what: String) {
        let text = Array(#"{"a":[{"b":"ok"},{"b":"x"#.utf8) + bytes + Array(#"y"}]}"#.utf8)
        #expect(throws: JSONParseError(offset: 24, message: "a string that is not valid UTF-8", kind: .invalidUTF8, member: "a[1].b"),
                "\(what)") {
            try JSONParser.parse(text)
        }
    }

    @Test func escapedSurrogatesMustPair() throws {
        #expect(try JSONParser.parse(Array(#""\ud83d\ude00""#.utf8)) == .string("😀"))
        #expect(try JSONParser.parse(Array(#"{"k":"caf\u00e9"}"#.utf8))["k"] == .string("café"))
        #expect(throws: JSONParseError(offset: 10, message: "a \\u escape of an unpaired surrogate", kind: .invalidUTF8, member: "token")) {
            try JSONParser.parse(Array(#"{"token":"\ud800x"}"#.utf8))
        }
        #expect(throws: JSONParseError(offset: 10, message: "a \\u escape of an unpaired surrogate", kind: .invalidUTF8, member: "token")) {
            try JSONParser.parse(Array(#"{"token":"\udc00"}"#.utf8))
        }
        #expect(throws: JSONParseError(offset: 10, message: "a \\u escape of a high surrogate not followed by a low one", kind: .invalidUTF8, member: "token")) {
            try JSONParser.parse(Array(#"{"token":"\ud800\u0041"}"#.utf8))
        }
    }

    @Test func aMemberNamedTwiceIsRejectedWithItsPath() throws {
        #expect(throws: JSONParseError(offset: 28, message: "the member \"purchaseToken\" appears twice", kind: .duplicateKey, member: "purchaseToken")) {
            try JSONParser.parse(Array(#"{"purchaseToken":"tok-a",   "purchaseToken":"tok-b"}"#.utf8))
        }
        let nested = #"{"receipt":{"in_app":[{"transaction_id":"1"},{"transaction_id":"2","transaction_id":"3"}]}}"#
        #expect(throws: JSONParseError(offset: 67, message: "the member \"transaction_id\" appears twice", kind: .duplicateKey,
                                       member: "receipt.in_app[1].transaction_id")) {
            try JSONParser.parse(Array(nested.utf8))
        }
        // Beyond 64 members the check uses a set: still found, and still exact.
        let wide = "{" + (0..<100).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k7\":0}"
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(wide.utf8)) }
        let distinct = "{" + (0..<40).map { "\"k\($0)\":{\"k\($0)\":1}" }.joined(separator: ",") + "}"
        #expect(try JSONParser.parse(Array(distinct.utf8)).object?.count == 40)
        // The same name in two objects is no duplicate.
        #expect(try JSONParser.parse(Array(#"[{"a":1},{"a":2}]"#.utf8)).array?.count == 2)
    }

    @Test func recordsAreQuarantinedForTheirOwnReason() {
        let duplicate = Array(#"{"packageName":"com.example.app","eventTimeMillis":"1709294400000","packageName":"com.other.app","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"t","subscriptionId":"p"}}"#.utf8)
        guard case .failure(let rejection) = parse(duplicate) else {
            Issue.record("accepted a record with a duplicate member")
            return
        }
        #expect(rejection.reason == .duplicateKey)
        #expect(rejection.detail == "the member \"packageName\" appears twice at byte 67 (member packageName)")
        // Inside an escaped body string, and inside Pub/Sub's base64 data, the same.
        let escaped = Array(#"{"source":"google.rtdn","body":"{\"a\":1,\"a\":2}"}"#.utf8)
        guard case .failure(let inBody) = parse(escaped) else {
            Issue.record("accepted a body with a duplicate member")
            return
        }
        #expect(inBody.reason == .duplicateKey)
        // Syntax errors stay malformed JSON.
        guard case .failure(let syntax) = parse(Array(#"{"a":1,}"#.utf8)) else { return }
        #expect(syntax.reason == .malformedJSON)
    }

    /// The string scanner reads eight bytes at a time: every special byte must be found at every position of a
    /// word, and a string's text must not change with where its bytes fall.
    @Test func specialBytesAreFoundAtEveryPositionOfAWord() throws {
        for position in 0..<24 {
            let before = String(repeating: "a", count: position)
            let after = String(repeating: "b", count: 23 - position)
            #expect(try JSONParser.parse(Array("\"\(before)é\(after)\"".utf8)) == .string(before + "é" + after))
            #expect(try JSONParser.parse(Array("\"\(before)\\\"\(after)\"".utf8)) == .string(before + "\"" + after))
            #expect(try JSONParser.parse(Array("\"\(before)\"".utf8)) == .string(before))
            #expect(throws: JSONParseError(offset: 1 + position, message: "control character in a string")) {
                try JSONParser.parse(Array("\"\(before)\u{1}\(after)\"".utf8))
            }
            #expect(throws: JSONParseError(offset: 1 + position, message: "a string that is not valid UTF-8", kind: .invalidUTF8)) {
                try JSONParser.parse(Array("\"\(before)".utf8) + [0xFF] + Array("\(after)\"".utf8))
            }
            #expect(throws: JSONParseError.self) { try JSONParser.parse(Array("\"\(before)".utf8)) }
        }
    }

    /// A text whose parsed values would take more than its budget (``JSONParser/memoryBudget``, 2 MiB here so
    /// that the test stays small beside the others) is refused where the budget runs out: a few megabytes of tiny
    /// objects would otherwise take gigabytes. A text of as many bytes in few long strings is read.
    @Test func aTextOfTooManyValuesIsRefusedWithinTheBudget() throws {
        func parse(_ text: String) throws(JSONParseError) -> JSON {
            let bytes = Array(text.utf8)
            let result: Result<JSON, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
                do throws(JSONParseError) { return .success(try JSONParser.parse(buffer: buffer, budget: 2 << 20)) } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
        let tiny = "[" + Array(repeating: #"{"b":1}"#, count: 12_000).joined(separator: ",") + "]"
        do {
            _ = try parse(tiny)
            Issue.record("12,000 objects parsed within 2 MiB")
        } catch {
            #expect(error.message.hasPrefix("too large to read: its values would take more than 2 MiB")
                    && error.quarantineReason == .malformedJSON, "\(error.message)")
            #expect(error.offset < tiny.utf8.count / 2, "refused where the budget ran out: \(error.offset)")
        }
        let long = "[" + Array(repeating: "\"" + String(repeating: "x", count: 800) + "\"", count: 100).joined(separator: ",") + "]"
        #expect(try parse(long).array?.count == 100)
    }
}
