/// A JWS in compact serialisation (`base64url(header).base64url(payload).base64url(signature)`), split and
/// decoded but **not verified**: `AppStore` verifies before any fact is taken from it. Ingest decodes only to
/// recognise the record and to read its deduplication key.
public struct CompactJWS: Sendable, Hashable {
    /// The compact text as received.
    public var text: String
    /// The decoded protected header.
    public var header: JSON
    /// The decoded payload.
    public var payload: JSON
    /// ASCII bytes of `header.payload`, the input the signature covers.
    public var signingInput: [UInt8]
    /// The raw signature bytes (for ES256: 64 bytes, `r || s`).
    public var signature: [UInt8]

    /// Splits and decodes `text`; `nil` when it is not three base64url parts with JSON header and payload.
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]),
              let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              let header = try? JSONParser.parse(headerBytes), header.object != nil,
              let payload = try? JSONParser.parse(payloadBytes)
        else { return nil }
        self.text = text
        self.header = header
        self.payload = payload
        self.signingInput = Array(text.utf8[..<parts[1].endIndex])
        self.signature = signature
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
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }

    /// Decodes a string in either alphabet.
    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }

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
