import Ingest
import Testing

/// The decoder has a four-characters-at-a-time fast path and a general loop; these pin that both agree with
/// RFC 4648 wherever the input switches from one to the other.
struct Base64URLTests {
    @Test func decodesTheRFC4648TestVectorsWithAndWithoutPadding() {
        let vectors: [(String, String)] = [
            ("", ""), ("Zg==", "f"), ("Zm8=", "fo"), ("Zm9v", "foo"), ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"), ("Zm9vYmFy", "foobar"), ("Zg", "f"), ("Zm8", "fo"), ("Zm9vYg", "foob"),
        ]
        for (encoded, decoded) in vectors {
            #expect(Base64URL.decode(encoded) == Array(decoded.utf8), "\(encoded)")
        }
    }

    @Test func roundTripsEveryLengthAndByteValueInBothAlphabets() {
        var bytes: [UInt8] = []
        for length in 0..<70 {
            let encoded = Base64URL.encode(bytes)
            #expect(Base64URL.decode(encoded) == bytes, "length \(length)")
            let standard = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            #expect(Base64URL.decode(standard) == bytes, "standard alphabet, length \(length)")
            bytes.append(UInt8(truncatingIfNeeded: length * 37 + 251))
        }
    }

    @Test func paddingInsideTheTextIsSkippedWhereverItFalls() {
        // "Zm9vYmFy" with `=` inserted at every position still decodes to "foobar" (padding is ignored).
        let text = Array("Zm9vYmFy".utf8)
        for index in 0...text.count {
            var padded = text
            padded.insert(UInt8(ascii: "="), at: index)
            #expect(Base64URL.decode(padded) == Array("foobar".utf8), "= at \(index)")
        }
    }

    @Test func anyByteOutsideBothAlphabetsFailsTheWholeText() {
        for bad in ["Zm9v!mFy", "Zm9vYmF*", "*m9vYmFy", "Zm9vYmFyZm9v YmFy", "Zm9v\nYmFy"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
    }
}
