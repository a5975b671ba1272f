import Facts

/// Prices and durations of products, from the `--prices` file (CSV `platform,product_id,currency,price,duration`).
///
/// Legacy Apple payloads (verifyReceipt, V1 notifications) state no price: the price list fills it in for the
/// platform, product and currency. Prices are exact integer micros (`4.99` → 4_990_000). The duration, when
/// given, is the product's billing period for retention cohorts and MRR; one duration per (platform, product).
public struct PriceList: Sendable {
    private struct PriceKey: Hashable {
        var platform: Platform
        var productId: String
        var currency: String
    }

    private struct ProductKey: Hashable {
        var platform: Platform
        var productId: String
    }

    private var prices: [PriceKey: Int64] = [:]
    private var durations: [ProductKey: BillingDuration] = [:]

    /// A list with no prices: every legacy Apple transaction is unpriced.
    public static let empty = PriceList()

    private init() {}

    /// Parses the CSV text of a price list. Throws on a missing column, an unknown platform, a price that is not
    /// a plain decimal with at most 6 places, an invalid ISO 8601 duration, or two rows that disagree.
    public init(csv: String) throws(ConfigurationError) {
        let file = "prices"
        let table = try ConfigurationCSV(text: csv, file: file,
                                         columns: ["platform", "product_id", "currency", "price", "duration"])
        for row in table.rows {
            func fail(_ reason: String) -> ConfigurationError { ConfigurationError(file: file, line: row.line, reason: reason) }
            guard let platform = Platform(rawValue: row.value("platform").lowercased()) else {
                throw fail("platform `\(row.value("platform"))` is neither apple nor google")
            }
            let productId = row.value("product_id")
            guard !productId.isEmpty else { throw fail("empty product_id") }
            let currency = row.value("currency").uppercased()
            guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw fail("currency `\(row.value("currency"))` is not an ISO 4217 code")
            }
            guard let micros = DecimalText.scaled(row.value("price"), scale: 6) else {
                throw fail("price `\(row.value("price"))` is not a non-negative decimal with at most 6 places")
            }
            let priceKey = PriceKey(platform: platform, productId: productId, currency: currency)
            if let known = prices[priceKey], known != micros {
                throw fail("a second, different price for \(platform.rawValue) \(productId) \(currency)")
            }
            prices[priceKey] = micros
            let durationText = row.value("duration")
            guard !durationText.isEmpty else { continue }
            guard let duration = BillingDuration(iso: durationText) else {
                throw fail("duration `\(durationText)` is not ISO 8601 like P1W, P1M, P3M, P1Y or P7D")
            }
            let productKey = ProductKey(platform: platform, productId: productId)
            if let known = durations[productKey], known != duration {
                throw fail("\(platform.rawValue) \(productId) has durations \(known) and \(duration)")
            }
            durations[productKey] = duration
        }
    }

    /// The listed price in micros of `productId` in `currency` on `platform`.
    public func priceMicros(platform: Platform, productId: String, currency: String) -> Int64? {
        prices[PriceKey(platform: platform, productId: productId, currency: currency)]
    }

    /// The listed billing duration of `productId` on `platform`.
    public func duration(platform: Platform, productId: String) -> BillingDuration? {
        durations[ProductKey(platform: platform, productId: productId)]
    }
}

extension PriceList {
    /// The first listed price or duration (in key order) that `other` does not list the same, in words; `nil`
    /// when both lists are the same.
    func firstDifference(from other: PriceList) -> String? {
        let priceKeys = Set(prices.keys).union(other.prices.keys).sorted(by: Self.precedes)
        for key in priceKeys where prices[key] != other.prices[key] {
            func text(_ micros: Int64?) -> String { micros.map { DecimalText.text($0, scale: 6) } ?? "no price" }
            return "\(key.platform.rawValue) \(key.productId) \(key.currency): \(text(prices[key])) here, "
                + "\(text(other.prices[key])) in the other"
        }
        let durationKeys = Set(durations.keys).union(other.durations.keys).sorted(by: Self.precedes)
        for key in durationKeys where durations[key] != other.durations[key] {
            func text(_ duration: BillingDuration?) -> String { duration?.description ?? "no duration" }
            return "\(key.platform.rawValue) \(key.productId): \(text(durations[key])) here, "
                + "\(text(other.durations[key])) in the other"
        }
        return nil
    }

    /// Every price and duration, in key order (byte order of platform, product, currency).
    func encode(to writer: inout PartialWriter) {
        writer.count(prices.count)
        for key in prices.keys.sorted(by: Self.precedes) {
            writer.platform(key.platform)
            writer.string(key.productId)
            writer.string(key.currency)
            writer.signed(prices[key] ?? 0)
        }
        writer.count(durations.count)
        for key in durations.keys.sorted(by: Self.precedes) {
            writer.platform(key.platform)
            writer.string(key.productId)
            writer.int(durations[key]?.count ?? 0)
            writer.string(durations[key]?.unit.rawValue ?? "")
        }
    }

    /// The list `encode` wrote.
    init(from reader: inout PartialReader) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let key = PriceKey(platform: try reader.platform(), productId: try reader.string(), currency: try reader.string())
            let micros = try reader.signed()
            guard micros >= 0, prices.updateValue(micros, forKey: key) == nil else { throw .damaged("a price list entry is repeated or negative") }
        }
        for _ in 0..<(try reader.count()) {
            let key = ProductKey(platform: try reader.platform(), productId: try reader.string())
            let count = try reader.int()
            guard let unit = BillingDuration.Unit(rawValue: try reader.string()), (1...10_000).contains(count),
                  durations.updateValue(BillingDuration(count: count, unit: unit), forKey: key) == nil else {
                throw .damaged("a price list duration is repeated or invalid")
            }
        }
    }

    private static func precedes(_ lhs: PriceKey, _ rhs: PriceKey) -> Bool {
        ByteOrder.precedes([lhs.platform.rawValue, lhs.productId, lhs.currency], [rhs.platform.rawValue, rhs.productId, rhs.currency])
    }

    private static func precedes(_ lhs: ProductKey, _ rhs: ProductKey) -> Bool {
        ByteOrder.precedes([lhs.platform.rawValue, lhs.productId], [rhs.platform.rawValue, rhs.productId])
    }
}
