/// Google order ids: the first order of a subscription is `GPA.1234-5678-9012-34567`, its renewal N (from 0)
/// `GPA.1234-5678-9012-34567..N`.
enum GoogleOrderId {
    /// The 0-based position of an order in its subscription: `GPA.x` is 0, renewal `GPA.x..N` is N + 1.
    static func index(_ order: String?) -> Int64 {
        guard let order else { return 0 }
        let bytes = Array(order.utf8)
        var index = bytes.count - 1
        while index > 0, !(bytes[index] == UInt8(ascii: ".") && bytes[index - 1] == UInt8(ascii: ".")) { index -= 1 }
        guard index > 0, let n = Int64(String(decoding: bytes[(index + 1)...], as: UTF8.self)), n >= 0, n < .max else { return 0 }
        return n + 1
    }
}
