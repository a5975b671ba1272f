import Facts
import SubscriptionMetrics
import Testing

/// `--prices` and `--fx-rates` files: exact parsing and errors that name the line.
@Suite struct ConfigurationTests {
    @Test func priceListParsesExactly() throws {
        let prices = try PriceList(csv: "platform,product_id,currency,price,duration\r\n"
                                   + "apple,premium_monthly,USD,4.99,P1M\r\n\r\n"
                                   + "google,\"premium,annual\",eur,59.990001,P1Y\r\n"
                                   + "google,lifetime,USD,19,\n")
        #expect(prices.priceMicros(platform: .apple, productId: "premium_monthly", currency: "USD") == 4_990_000)
        #expect(prices.priceMicros(platform: .google, productId: "premium,annual", currency: "EUR") == 59_990_001)
        #expect(prices.priceMicros(platform: .google, productId: "lifetime", currency: "USD") == 19_000_000)
        #expect(prices.priceMicros(platform: .google, productId: "premium_monthly", currency: "USD") == nil)
        #expect(prices.duration(platform: .apple, productId: "premium_monthly")?.description == "P1M")
        #expect(prices.duration(platform: .google, productId: "lifetime") == nil)
    }

    @Test(arguments: [
        ("platform,product_id,currency,price\n", 1, "duration"),
        ("platform,product_id,currency,price,duration\nandroid,x,USD,1.00,P1M\n", 2, "platform"),
        ("platform,product_id,currency,price,duration\napple,x,USD,1.0000001,P1M\n", 2, "price"),
        ("platform,product_id,currency,price,duration\napple,x,USD,-1,P1M\n", 2, "price"),
        ("platform,product_id,currency,price,duration\napple,x,USD,1,P1Q\n", 2, "duration"),
        ("platform,product_id,currency,price,duration\napple,x,USD,1,P1M\napple,x,USD,2,P1M\n", 3, "different price"),
        ("platform,product_id,currency,price,duration\napple,x,USD,1,P1M\napple,x,EUR,1,P1Y\n", 3, "durations"),
        ("platform,product_id,currency,price,duration\napple,x,US,1,P1M\n", 2, "currency"),
        ("platform,product_id,currency,price,duration\napple,x,USD,1\n", 2, "fields"),
    ])
    func priceListErrorsNameTheLine(text: String, line: Int, mentions: String) {
        #expect {
            _ = try PriceList(csv: text)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.line == line && error.file == "prices" && error.description.contains(mentions)
        }
    }

    @Test func fxRatesErrors() {
        #expect(throws: ConfigurationError.self) { try FXRates(csv: "month,currency,rate_to_reporting_currency\n2024-13,JPY,0.0067\n") }
        #expect(throws: ConfigurationError.self) { try FXRates(csv: "month,currency,rate_to_reporting_currency\n2024-01,JPY,0\n") }
        #expect(throws: ConfigurationError.self) { try FXRates(csv: "month,currency,rate\n") }
        #expect(throws: ConfigurationError.self) {
            try FXRates(csv: "month,currency,rate_to_reporting_currency\n2024-01,JPY,0.0067\n2024-01,JPY,0.0068\n")
        }
        #expect(throws: Never.self) {
            try FXRates(csv: "month,currency,rate_to_reporting_currency\n2024-01,JPY,0.0067\n2024-01,JPY,0.00670\n")
        }
        // The reporting currency's own amounts convert at 1: another rate for it would be ignored unsaid.
        let own = "month,currency,rate_to_reporting_currency\n2024-01,EUR,0.9\n2024-01,JPY,0.0062\n"
        #expect(throws: ConfigurationError.self) { try FXRates(csv: own, reportingCurrency: "eur") }
        #expect(throws: Never.self) { try FXRates(csv: own, reportingCurrency: "USD") }
        #expect(throws: Never.self) {
            try FXRates(csv: "month,currency,rate_to_reporting_currency\n2024-01,EUR,1.00\n", reportingCurrency: "EUR")
        }
    }

    @Test func durationsParseAndInfer() {
        #expect(BillingDuration(iso: "P1W")?.description == "P1W")
        #expect(BillingDuration(iso: "P7D")?.description == "P7D")
        #expect(BillingDuration(iso: "P0M") == nil)
        #expect(BillingDuration(iso: "1M") == nil)
        #expect(BillingDuration.inferred(lengthMillis: 28 * day).description == "P1M")
        #expect(BillingDuration.inferred(lengthMillis: 31 * day).description == "P1M")
        #expect(BillingDuration.inferred(lengthMillis: 7 * day + hour).description == "P1W")
        #expect(BillingDuration.inferred(lengthMillis: 92 * day).description == "P3M")
        #expect(BillingDuration.inferred(lengthMillis: 366 * day).description == "P1Y")
        #expect(BillingDuration.inferred(lengthMillis: 14 * day).description == "P14D")
        // A February month, or three months from February, placed a few seconds after its charge.
        #expect(BillingDuration.inferred(lengthMillis: 28 * day - 2_000).description == "P1M")
        #expect(BillingDuration.inferred(lengthMillis: 89 * day - 2_000).description == "P3M")
        #expect(BillingDuration.inferred(lengthMillis: 26 * day).description == "P26D")
        #expect(BillingDuration.inferred(lengthMillis: 5 * day - 2_000).description == "P5D")
        #expect(BillingDuration.inferred(lengthMillis: 3 * hour).description == "P1D")
    }
}
