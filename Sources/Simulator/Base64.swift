/// Base64 (RFC 4648 §4) and base64url (§5, no padding) over bytes, without Foundation's string bridging
/// (the simulator encodes every Pub/Sub message and three JWS parts per App Store notification).
enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Standard alphabet with `=` padding.
    static func encode(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: standard, pad: true) }

    /// URL-safe alphabet without padding, as JWS uses it.
    static func encodeURL(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: url, pad: false) }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = (UInt32(bytes[index]) << 16) | (UInt32(bytes[index + 1]) << 8) | UInt32(bytes[index + 2])
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(alphabet[Int((n >> 6) & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int((n >> 12) & 63)])
            if pad { out.append(contentsOf: [61, 61]) }
        } else if rest == 2 {
            let n = (UInt32(bytes[index]) << 16) | (UInt32(bytes[index + 1]) << 8)
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(alphabet[Int((n >> 6) & 63)])
            if pad { out.append(61) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
