/// The simulated apps' products and price list (`prices.csv`): what each product costs in each currency, how
/// long a period lasts and how long its grace period is on each platform.
struct Catalog: Sendable {
    struct Product: Sendable {
        var id: String
        /// ISO 8601 duration as `prices.csv` writes it.
        var duration: String
        /// Period length in days for weeks / years; months use calendar arithmetic (UTC).
        var unit: DurationUnit
        /// Apple grace period (ms); 0 = this product is configured without grace.
        var appleGraceMillis: Int64
        /// Google grace period (ms).
        var googleGraceMillis: Int64
        /// Price per currency, in micros.
        var prices: [String: Int64]
        /// Offers a free trial on its first period.
        var hasTrial: Bool
        /// Pay-as-you-go introductory offer (both stores): the price per currency (micros) of each of the first
        /// ``introductoryCycles`` paid periods of a new subscriber; empty when the product has none.
        var introductoryPrices: [String: Int64] = [:]
        var introductoryCycles = 0
    }

    enum DurationUnit: Sendable { case week, month, year }

    static let day: Int64 = 86_400_000
    static let bundleId = "com.example.subledger"
    static let currencies = ["USD", "JPY", "EUR", "GBP"]
    /// Apple storefront (alpha-3), Google region code (alpha-2) for each currency.
    static let storefronts: [String: (apple: String, appleId: String, google: String)] = [
        "USD": ("USA", "143441", "US"), "JPY": ("JPN", "143462", "JP"), "EUR": ("DEU", "143443", "DE"),
        "GBP": ("GBR", "143444", "GB"),
    ]

    let weekly = Product(id: "premium_weekly", duration: "P1W", unit: .week, appleGraceMillis: 0,
                         googleGraceMillis: 3 * day,
                         prices: ["USD": 1_990_000, "JPY": 300_000_000, "EUR": 1_990_000, "GBP": 1_790_000],
                         hasTrial: false)
    let monthly = Product(id: "premium_monthly", duration: "P1M", unit: .month, appleGraceMillis: 16 * day,
                          googleGraceMillis: 7 * day,
                          prices: ["USD": 4_990_000, "JPY": 480_000_000, "EUR": 5_490_000, "GBP": 4_490_000],
                          hasTrial: true,
                          introductoryPrices: ["USD": 990_000, "JPY": 160_000_000, "EUR": 1_090_000, "GBP": 990_000],
                          introductoryCycles: 2)
    let annual = Product(id: "premium_annual", duration: "P1Y", unit: .year, appleGraceMillis: 16 * day,
                         googleGraceMillis: 7 * day,
                         prices: ["USD": 39_990_000, "JPY": 4_800_000_000, "EUR": 44_990_000, "GBP": 34_990_000],
                         hasTrial: true)
    /// A consumable (Apple) / one-time product (Google).
    let coins = Product(id: "coins_100", duration: "", unit: .week, appleGraceMillis: 0, googleGraceMillis: 0,
                        prices: ["USD": 990_000, "JPY": 160_000_000, "EUR": 1_090_000, "GBP": 890_000],
                        hasTrial: false)

    var subscriptions: [Product] { [weekly, monthly, annual] }

    /// The end of a period of `product` that starts at `start` (calendar months and years in UTC, as the
    /// stores bill).
    func end(of product: Product, from start: Int64) -> Int64 {
        switch product.unit {
        case .week: return start + 7 * Catalog.day
        case .month: return UTCCalendar.adding(months: 1, to: start)
        case .year: return UTCCalendar.adding(months: 12, to: start)
        }
    }

    /// `prices.csv`: `platform,product_id,currency,price,duration`, one row per platform, product and currency.
    var pricesCSV: String {
        var lines = ["platform,product_id,currency,price,duration"]
        for platform in ["apple", "google"] {
            for product in subscriptions + [coins] {
                for currency in Catalog.currencies {
                    guard let micros = product.prices[currency] else { continue }
                    lines.append("\(platform),\(product.id),\(currency),\(Money.decimal(micros: micros)),\(product.duration)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
