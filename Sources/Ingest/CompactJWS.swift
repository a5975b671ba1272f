/// A JWS in compact serialisation (`base64url(header).base64url(payload).base64url(signature)`), split and
/// decoded but **not verified**: the store module verifies it before any fact is taken from it. Ingest decodes
/// only to recognise the record and to read its deduplication key.
///
/// The header is kept encoded and decoded on demand (``decodeHeader()``): a store's header is mostly its
/// `x5c` certificate chain (about 4 kB), the same for millions of payloads, and only a chain the verifier has
/// not seen yet needs reading. Nested JWS (a signed transaction inside a signed notification) never need it.
public struct CompactJWS: Sendable, Hashable {
    /// The compact text as received.
    public var text: String
    /// The decoded payload.
    public var payload: JSON
    /// ASCII bytes of `header.payload`, the input the signature covers.
    public var signingInput: [UInt8]
    /// The raw signature bytes (for ES256: 64 bytes, `r || s`).
    public var signature: [UInt8]
    /// Length of the header's base64url text at the start of ``signingInput``.
    private var headerLength: Int

    /// Splits and decodes `text`; `nil` when it is not three base64url parts with a JSON payload (the header is
    /// not looked at here; ``decodeHeader()`` reads it).
    ///
    /// Works on the string's contiguous UTF-8 bytes: every signed record passes here two or three times
    /// (sniffing, verification, inner payloads), so a generic `split` over `String.UTF8View` was a third of
    /// ingest's CPU time.
    public init?(_ text: String) {
        var text = text
        let decoded: (payload: JSON, signingInput: [UInt8], signature: [UInt8], headerLength: Int)? = text.withUTF8 { bytes in
            let dot = UInt8(ascii: ".")
            guard let first = bytes.index(of: dot, from: 0), first > 0,
                  let second = bytes.index(of: dot, from: first + 1),
                  bytes.index(of: dot, from: second + 1) == nil,
                  let payloadBytes = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])),
                  let signature = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[(second + 1)...])),
                  let payload = try? JSONParser.parse(payloadBytes)
            else { return nil }
            return (payload, Array(UnsafeBufferPointer(rebasing: bytes[..<second])), signature, first)
        }
        guard let decoded else { return nil }
        self.text = text
        self.payload = decoded.payload
        self.signingInput = decoded.signingInput
        self.signature = decoded.signature
        self.headerLength = decoded.headerLength
    }

    /// The header's base64url text, as signed: equal texts are equal headers.
    public var headerSegment: ArraySlice<UInt8> { signingInput[..<headerLength] }

    /// The decoded protected header; `nil` when it is not base64url of a JSON object.
    public func decodeHeader() -> JSONObject? {
        guard let bytes = headerSegment.withUnsafeBufferPointer({ Base64URL.decode(buffer: $0) }),
              let header = try? JSONParser.parse(bytes) else { return nil }
        return header.object
    }

    /// Whether `text` looks like a compact JWS (three dot-separated base64url parts), without decoding it.
    public static func looksLikeJWS(_ text: String) -> Bool {
        var dots = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") { dots += 1; continue }
            guard Base64URL.isAlphabet(byte) else { return false }
        }
        return dots == 2 && text.utf8.count > 16
    }
}

/// Base64 in both alphabets (RFC 4648 §4 and §5), padding optional.
public enum Base64URL {
    /// Decodes standard or URL-safe base64, with or without `=` padding; `nil` on any other byte.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if let decoded = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// 6-bit value of each byte in either alphabet; `skip` for `=` (padding, ignored wherever it is),
    /// `invalid` for any other byte.
    private static let values: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt8(byte) - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt8(byte) - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt8(byte) - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"), UInt8(ascii: "+"): return 62
        case UInt8(ascii: "_"), UInt8(ascii: "/"): return 63
        case UInt8(ascii: "="): return skip
        default: return invalid
        }
    }
    private static let skip: UInt8 = 0xFE
    private static let invalid: UInt8 = 0xFF

    /// The decoder proper, on contiguous bytes (x5c certificates and JWS parts are decoded for every record).
    static func decode(buffer text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        values.withUnsafeBufferPointer { values in
            var failed = false
            let out = [UInt8](unsafeUninitializedCapacity: text.count * 3 / 4 + 1) { out, initialized in
                var count = 0
                var position = 0
                // Fast path: four alphabet characters are three bytes. It stops at the first padding or invalid
                // byte (both have the high bits set), where the general loop below takes over.
                while position + 4 <= text.count {
                    let a = values[Int(text[position])], b = values[Int(text[position + 1])]
                    let c = values[Int(text[position + 2])], d = values[Int(text[position + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else { break }
                    let quad = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[count] = UInt8(truncatingIfNeeded: quad >> 16)
                    out[count + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                    out[count + 2] = UInt8(truncatingIfNeeded: quad)
                    count += 3
                    position += 4
                }
                var buffer: UInt32 = 0
                var bits: UInt32 = 0
                for byte in UnsafeBufferPointer(rebasing: text[position...]) {
                    let value = values[Int(byte)]
                    if value >= skip {
                        if value == invalid { failed = true; break }
                        continue
                    }
                    buffer = buffer << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[count] = UInt8(truncatingIfNeeded: buffer >> bits)
                        count += 1
                    }
                }
                initialized = count
            }
            return failed ? nil : out
        }
    }

    /// Decodes a string in either alphabet.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(buffer: $0) }
    }

    /// Encodes in the URL-safe alphabet without padding (as JWS does).
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                out.append(alphabet[Int(buffer >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(6 - bits) & 0x3F)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            return true
        default: return false
        }
    }
}
