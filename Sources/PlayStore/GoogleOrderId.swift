/// Google order ids: the first order of a subscription is `GPA.1234-5678-9012-34567`, its renewal N (from 0)
/// `GPA.1234-5678-9012-34567..N`.
enum GoogleOrderId {
    /// The 0-based position of an order in its subscription: `GPA.x` is 0, renewal `GPA.x..N` is N + 1.
    static func index(_ order: String?) -> Int64 {
        guard let order, let (_, n) = split(order) else { return 0 }
        return n.map { $0 + 1 } ?? 0
    }

    /// The id of the order at 0-based position `index` of the subscription whose orders are `base`..
    static func id(base: String, index: Int64) -> String {
        index == 0 ? base : "\(base)..\(index - 1)"
    }

    /// The largest renewal number read (a weekly plan renews 52 times a year): a larger `..N` is no order number
    /// Google issues, and bounds every sum of positions.
    static let largestRenewal: Int64 = 1_000_000

    /// The first order's id `base` and the renewal number N of `order` (`nil` for the first order itself); `nil`
    /// when a `..` suffix is not a number up to ``largestRenewal``.
    static func split(_ order: String) -> (base: String, renewal: Int64?)? {
        let bytes = Array(order.utf8)
        var index = bytes.count - 1
        while index > 0, !(bytes[index] == UInt8(ascii: ".") && bytes[index - 1] == UInt8(ascii: ".")) { index -= 1 }
        guard index > 0 else { return (order, nil) }
        guard let n = Int64(String(decoding: bytes[(index + 1)...], as: UTF8.self)), n >= 0, n <= largestRenewal else { return nil }
        return (String(decoding: bytes[..<(index - 1)], as: UTF8.self), n)
    }
}
