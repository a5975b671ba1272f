import Testing
@testable import Simulator

/// Introductory offers in the simulation: paid periods at a price the list does not have, which the pipeline
/// can only find in the payloads. Each offer falls where a payload states its price (Apple from the V2
/// cut-over, Google before the v2 one), so truth.json prices it at the offer and a reading from the list fails.
struct IntroductoryOfferTests {
    let catalog = Catalog()
    let appleCutover = UTCCalendar.adding(months: 5, to: Simulation.start)
    let googleCutover = UTCCalendar.adding(months: 8, to: Simulation.start)

    func subscriptions(count: Int) -> [SimulatedSubscription] {
        let horizon = UTCCalendar.adding(months: 24, to: Simulation.start) - 60_000
        let generator = SubscriberGenerator(catalog: catalog, start: Simulation.start, horizon: horizon,
                                            offerWindows: (appleFrom: appleCutover, googleBefore: googleCutover))
        return (0..<count).flatMap { generator.subscriber(index: $0, seed: 42) }
    }

    @Test func offersArePaidFirstPeriodsAtTheOfferPriceWherePayloadsStateIt() throws {
        let all = subscriptions(count: 3000)
        let offered = all.filter { $0.timeline.periods.contains(where: \.introductory) }
        let apple = offered.filter { $0.timeline.platform == .apple }
        let google = offered.filter { $0.timeline.platform == .google }
        #expect(apple.count >= 20 && google.count >= 5, "apple \(apple.count), google \(google.count)")
        // Google sells a free trial and an introductory price together (the trial first), Apple never.
        let afterATrial = offered.filter { $0.timeline.periods.first?.trial == true }
        #expect(afterATrial.count >= 3 && afterATrial.allSatisfy { $0.timeline.platform == .google }, "\(afterATrial.count)")
        for subscription in offered {
            let periods = subscription.timeline.periods
            let trial = periods.first?.trial == true ? 1 : 0
            let offer = periods.dropFirst(trial).prefix { $0.introductory }
            // The offer's periods come first (after a trial), at most its cycles, none of them a trial, and none
            // after it.
            #expect((1...catalog.monthly.introductoryCycles).contains(offer.count))
            #expect(periods.dropFirst(trial + offer.count).allSatisfy { !$0.introductory })
            for period in offer {
                #expect(!period.trial && period.product == catalog.monthly.id)
                #expect(period.priceMicros == catalog.monthly.introductoryPrices[subscription.currency])
                #expect(period.priceMicros != catalog.monthly.prices[subscription.currency])
                switch subscription.timeline.platform {
                case .apple: #expect(period.start >= appleCutover)
                case .google: #expect(period.end < googleCutover)
                }
            }
            // A renewal after the offer is charged the list price.
            if let next = periods.dropFirst(trial + offer.count).first, next.product == catalog.monthly.id, !next.trial {
                #expect(next.priceMicros == catalog.monthly.prices[subscription.currency])
            }
        }
    }

    @Test func payloadsStateTheOffer() throws {
        let all = subscriptions(count: 3000)
        let google = try #require(all.first { $0.timeline.platform == .google && $0.timeline.periods.first?.introductory == true })
        let token = google.timeline.id
        let v1 = try #require(GooglePayloads(catalog: catalog, subscription: google)
            .resourceV1(token: token, at: google.timeline.periods[0].start + 60_000, scheduledResume: nil)).serialized
        let price = try #require(google.timeline.periods[0].priceMicros)
        #expect(v1.contains(#""introductoryPriceInfo":{"introductoryPriceCurrencyCode":"\#(google.currency)","introductoryPriceAmountMicros":"\#(price)","introductoryPricePeriod":"P1M","introductoryPriceCycles":2}"#), "\(v1)")
        // The first order is `GPA.x`, the second `GPA.x..0`: the two the offer's cycles cover.
        #expect(v1.contains(#""orderId":"\#(google.timeline.periods[0].transactionId)""#))

        // After a free trial: the trial's own resource shows the offer already, as Google shows it from the purchase.
        let afterTrial = try #require(all.first {
            $0.timeline.platform == .google && $0.timeline.periods.first?.trial == true && $0.timeline.periods.contains(where: \.introductory)
        })
        let trialV1 = try #require(GooglePayloads(catalog: catalog, subscription: afterTrial)
            .resourceV1(token: afterTrial.timeline.id, at: afterTrial.timeline.periods[0].start + 60_000, scheduledResume: nil)).serialized
        #expect(trialV1.contains(#""paymentState":2"#) && trialV1.contains(#""introductoryPriceCycles":2"#), "\(trialV1)")

        let apple = try #require(all.first { $0.timeline.platform == .apple && $0.timeline.periods.first?.introductory == true })
        let chain = try AppleSigningChain(seed: 1, label: "Test")
        let payloads = ApplePayloads(catalog: catalog, subscription: apple, chain: chain, numericQuantity: false,
                                     zeroCancellationDate: false)
        let period = apple.timeline.periods[0]
        let transaction = payloads.transactionInfo(period, at: period.start + 60_000, reason: "PURCHASE").serialized
        #expect(transaction.contains(#""price":\#((period.priceMicros ?? 0) / 1000)"#), "\(transaction)")
        #expect(transaction.contains(#""offerType":1,"offerDiscountType":"PAY_AS_YOU_GO""#), "\(transaction)")
        let receipt = payloads.verifyReceipt(at: period.start + 60_000).serialized
        #expect(receipt.contains(#""is_in_intro_offer_period":"true""#))
    }
}
