import AppStore
import Facts
import Ingest
import Testing

/// App Store Server Notifications V2 signed with a generated Apple-shaped chain that the translator trusts.
@Suite struct NotificationV2Tests {
    let chain: TestChain
    let translator: AppStoreTranslator
    static let signedDate: Millis = 1_709_300_000_000
    static let purchase: Millis = 1_706_700_000_000
    static let expires: Millis = 1_709_200_000_000

    init() throws {
        chain = try TestChain()
        translator = try AppStoreTranslator(trustedRoots: [chain.rootDER], bundleIds: ["com.example.app"], times: testTimes)
    }

    static func transaction(id: String = "5002", product: String = "premium_monthly",
                            type: String = "Auto-Renewable Subscription", expires: Millis? = NotificationV2Tests.expires,
                            extra: String = "") -> String {
        // A subscription's transactions share the first one's id as the original and each has its own line item;
        // a one-time product is its own original and has none.
        let expiry = expires.map { #""expiresDate":\#($0),"# } ?? ""
        let original = expires == nil ? id : "5000"
        let lineItem = expires == nil ? "" : #""webOrderLineItemId":"3100000\#(id)","#
        return """
        {"transactionId":"\(id)","originalTransactionId":"\(original)",\(lineItem)"bundleId":"com.example.app",\
        "productId":"\(product)","subscriptionGroupIdentifier":"21000000","purchaseDate":\(purchase),\
        "originalPurchaseDate":1704000000000,\(expiry)"quantity":1,"type":"\(type)","inAppOwnershipType":"PURCHASED",\
        "signedDate":\(signedDate),"environment":"Production","transactionReason":"RENEWAL","storefront":"USA",\
        "storefrontId":"143441","price":4990,"currency":"USD",\
        "appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"\(extra)}
        """
    }

    static func renewal(extra: String = "", autoRenew: Int = 1) -> String {
        """
        {"originalTransactionId":"5000","autoRenewProductId":"premium_monthly","productId":"premium_monthly",\
        "autoRenewStatus":\(autoRenew),"signedDate":\(signedDate),"environment":"Production",\
        "recentSubscriptionStartDate":1704000000000,"renewalDate":\(expires)\(extra)}
        """
    }

    func notification(_ type: String, subtype: String? = nil, transaction: String? = NotificationV2Tests.transaction(),
                      renewal: String? = NotificationV2Tests.renewal(), environment: String = "Production",
                      bundle: String = "com.example.app", dated: Bool = true,
                      envelope: Envelope = Envelope()) throws -> Translation {
        let signed = try signedNotification(type, subtype: subtype, transaction: transaction, renewal: renewal,
                                            environment: environment, bundle: bundle, dated: dated)
        return translator.translate(record(.appleNotificationV2, jws: signed, envelope: envelope))
    }

    /// The `signedPayload` of a notification, its transaction and renewal info signed inside it.
    func signedNotification(_ type: String, subtype: String? = nil, uuid: String = "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
                            transaction: String? = NotificationV2Tests.transaction(),
                            renewal: String? = NotificationV2Tests.renewal(), environment: String = "Production",
                            bundle: String = "com.example.app", dated: Bool = true) throws -> String {
        var data = #""appAppleId":1234567890,"bundleId":"\#(bundle)","bundleVersion":"42","environment":"\#(environment)","status":1"#
        if let transaction { data += #","signedTransactionInfo":"\#(try chain.sign(transaction))""# }
        if let renewal { data += #","signedRenewalInfo":"\#(try chain.sign(renewal))""# }
        let sub = subtype.map { #""subtype":"\#($0)","# } ?? ""
        let payload = """
        {"notificationType":"\(type)",\(sub)"notificationUUID":"\(uuid)",\
        "data":{\(data)},"version":"2.0"\(dated ? #","signedDate":\#(Self.signedDate)"# : "")}
        """
        return try chain.sign(payload)
    }

    /// Notifications V2 of 2021 and early 2022 carry no `signedDate`: the transaction and renewal info Apple signed
    /// with them do, and date both the chain's check and the statement. With neither nested JWS, the record's
    /// `received_at` does; with nothing at all, no time to check the certificates at is left.
    @Test func aNotificationWithoutSignedDateIsDatedByWhatWasSignedWithIt() throws {
        let renewed = try notification("DID_RENEW", dated: false)
        let period = try #require(renewed.facts.of(AppleFactKind.period).first)
        #expect(period.observedAt == Self.signedDate && period.end == Self.expires)
        #expect(renewed.quarantineReason == nil && renewed.parts.isEmpty)
        let bare = try notification("DID_CHANGE_RENEWAL_STATUS", transaction: nil, renewal: nil, dated: false)
        #expect(bare.quarantineReason == .badSignature)
        let logged = try notification("DID_CHANGE_RENEWAL_STATUS", transaction: nil, renewal: nil, dated: false,
                                      envelope: Envelope(receivedAt: Self.signedDate))
        #expect(logged.quarantineReason == nil)
    }

    /// A refund request names the transaction it is about, often an older one than the subscription's latest:
    /// its expiry is no period end for the renewal info's billing outcome. `renewalDate` (the latest purchase's
    /// expiry, "may be in the past") dates it; without it only the auto-renew state is read.
    @Test func aRefundRequestsRenewalInfoDatesItsOutcomeByRenewalDate() throws {
        let older = Self.transaction(id: "5001", expires: Self.expires - 2_592_000_000)
        let failed = Self.renewal(extra: #","expirationIntent":2,"isInBillingRetryPeriod":true"#)
        let facts = try notification("CONSUMPTION_REQUEST", transaction: older, renewal: failed).facts
        #expect(facts.of(AppleFactKind.billingIssue).map(\.at) == [Self.expires])
        let undated = failed.replacingOccurrences(of: #","renewalDate":\#(Self.expires)"#, with: "")
        let declined = try notification("REFUND_DECLINED", transaction: older, renewal: undated).facts
        #expect(declined.of(AppleFactKind.billingIssue).isEmpty && declined.of(AppleFactKind.expiry).isEmpty)
        #expect(declined.of(AppleFactKind.renewalStatus).count == 1)
        // Beside the latest transaction (a DID_FAIL_TO_RENEW) the transaction's expiry still dates it.
        let notice = try notification("DID_FAIL_TO_RENEW", transaction: Self.transaction(), renewal: undated).facts
        #expect(notice.of(AppleFactKind.billingIssue).map(\.at) == [Self.expires, Self.expires])
    }

    @Test func subscribedWithFreeTrial() throws {
        let trial = Self.transaction(id: "5000", extra: #","offerType":1,"offerDiscountType":"FREE_TRIAL","offerIdentifier":"trial7""#)
            .replacingOccurrences(of: #""price":4990"#, with: #""price":0"#)
        let facts = try notification("SUBSCRIBED", subtype: "INITIAL_BUY", transaction: trial).facts
        let period = try #require(facts.of(AppleFactKind.period).first)
        #expect(period.subject == "5000" && period.ref == "5000" && period.at == Self.purchase && period.end == Self.expires)
        #expect(period.flags == [.trial] && period.amountMicros == 0 && period.currency == "USD")
        #expect(period.observedAt == Self.signedDate && period.detail == "31000005000")
        #expect(facts.of(AppleFactKind.user).first?.ref == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(facts.of(AppleFactKind.renewalStatus).first?.flags == [.on])
    }

    @Test func introductoryPriceIsPaid() throws {
        let intro = Self.transaction(extra: #","offerType":1,"offerDiscountType":"PAY_AS_YOU_GO""#)
        let period = try #require(try notification("SUBSCRIBED", subtype: "RESUBSCRIBE", transaction: intro).facts.of(AppleFactKind.period).first)
        #expect(period.flags == [.introductory] && period.amountMicros == 4_990_000)
        // Signed before late 2023: `offerType` 1 without `offerDiscountType` or `price` (free or paid, unsaid).
        let old = Self.transaction(extra: #","offerType":1"#)
            .replacingOccurrences(of: #""price":4990,"currency":"USD","#, with: "")
        let unstated = try #require(try notification("SUBSCRIBED", subtype: "INITIAL_BUY", transaction: old).facts
            .of(AppleFactKind.period).first)
        #expect(unstated.flags == [.introductory, .inferred] && unstated.amountMicros == nil)
    }

    @Test func renewalsAndOffersGivePeriods() throws {
        for (type, subtype) in [("DID_RENEW", nil), ("DID_RENEW", "BILLING_RECOVERY"), ("OFFER_REDEEMED", "UPGRADE"),
                                ("PRICE_INCREASE", "ACCEPTED"), ("REFUND_DECLINED", nil), ("CONSUMPTION_REQUEST", nil),
                                ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"), ("A_TYPE_FROM_2030", "AND_ITS_SUBTYPE")] as [(String, String?)] {
            let facts = try notification(type, subtype: subtype).facts
            #expect(facts.of(AppleFactKind.period).map(\.ref) == ["5002"], "\(type) \(subtype ?? "")")
            #expect(facts.of(AppleFactKind.period).first?.amountMicros == 4_990_000)
            #expect(facts.of(AppleFactKind.revocation).isEmpty)
            // A billing recovery states the issue it recovers, at the recovered period's start.
            #expect(facts.of(AppleFactKind.billingIssue).map(\.at) == (subtype == "BILLING_RECOVERY" ? [Self.purchase] : []),
                    "\(type) \(subtype ?? "")")
        }
    }

    @Test func failureToRenewWithGrace() throws {
        let facts = try notification("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD",
                                     renewal: Self.renewal(extra: #","isInBillingRetryPeriod":true,"expirationIntent":2,"gracePeriodExpiresDate":1710500000000"#)).facts
        let issues = facts.of(AppleFactKind.billingIssue)
        #expect(!issues.isEmpty && issues.allSatisfy { $0.at == Self.expires && $0.end == 1_710_500_000_000 })
        #expect(facts.of(AppleFactKind.expiry).isEmpty)
        let plain = try notification("DID_FAIL_TO_RENEW", renewal: Self.renewal(extra: #","isInBillingRetryPeriod":true"#)).facts
        #expect(plain.of(AppleFactKind.billingIssue).allSatisfy { $0.at == Self.expires && $0.end == nil })
        let graceOver = try notification("GRACE_PERIOD_EXPIRED", renewal: Self.renewal(extra: #","isInBillingRetryPeriod":true"#)).facts
        #expect(graceOver.of(AppleFactKind.billingIssue).contains { $0.detail == "GRACE_PERIOD_EXPIRED" && $0.at == Self.expires })
    }

    @Test func expiredSubtypes() throws {
        let cases: [(String?, String, Millis)] = [
            ("VOLUNTARY", "voluntary", Self.expires), ("BILLING_RETRY", "billing", Self.signedDate),
            ("PRICE_INCREASE", "price_increase", Self.expires), ("PRODUCT_NOT_FOR_SALE", "product_unavailable", Self.expires),
            ("SOMETHING_ELSE", "SOMETHING_ELSE", Self.expires), (nil, "other", Self.expires),
        ]
        for (subtype, detail, at) in cases {
            let facts = try notification("EXPIRED", subtype: subtype, renewal: Self.renewal(autoRenew: 0)).facts
            let expiries = facts.of(AppleFactKind.expiry)
            #expect(expiries.contains { $0.detail == detail && $0.at == at && $0.end == Self.expires }, "\(subtype ?? "nil")")
        }
    }

    @Test func unknownExpirationIntentIsKept() throws {
        let facts = try notification("EXPIRED", subtype: "VOLUNTARY", renewal: Self.renewal(extra: #","expirationIntent":9"#, autoRenew: 0)).facts
        #expect(facts.of(AppleFactKind.expiry).contains { $0.detail == "9" })
    }

    @Test func autoRenewChanges() throws {
        let off = try notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", renewal: Self.renewal(autoRenew: 0)).facts
        #expect(off.of(AppleFactKind.renewalStatus).map(\.flags) == [[]])
        #expect(off.of(AppleFactKind.renewalStatus).first?.at == Self.signedDate)
        let on = try notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED").facts
        #expect(on.of(AppleFactKind.renewalStatus).map(\.flags) == [.on])
    }

    @Test func immediateUpgradeEndsTheOldPeriodInTheHistory() throws {
        let old = try notification("DID_RENEW").facts
        let upgradeAt = Self.purchase + 10 * 86_400_000
        let yearly = Self.transaction(id: "5003", product: "premium_yearly", expires: upgradeAt + 365 * 86_400_000)
            .replacingOccurrences(of: #""purchaseDate":\#(Self.purchase)"#, with: #""purchaseDate":\#(upgradeAt)"#)
        let upgrade = try notification("DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", transaction: yearly).facts
        let history = AppleHistoryBuilder().history(id: "5000", facts: old + upgrade)
        #expect(history.periods.map(\.id) == ["5002", "5003"])
        #expect(history.periods[0].end == upgradeAt && history.periods[0].endReason == .replaced)
        #expect(history.periods[0].revokedAt == nil)
    }

    @Test func refundsRevocationsAndReversals() throws {
        let prorated = Self.transaction(extra: #","revocationDate":1709250000000,"revocationReason":0,"revocationType":"REFUND_PRORATED","revocationPercentage":50000"#)
        let refund = try notification("REFUND", transaction: prorated).facts.of(AppleFactKind.revocation)
        #expect(refund.count == 1 && refund[0].at == 1_709_250_000_000 && refund[0].detail == "50000" && refund[0].ref == "5002")
        let revoked = Self.transaction(extra: #","revocationDate":1709250000000,"revocationReason":0"#)
        #expect(try notification("REVOKE", transaction: revoked).facts.of(AppleFactKind.revocation).first?.detail == "100000")
        let reversed = try notification("REFUND_REVERSED", transaction: revoked).facts
        #expect(reversed.of(AppleFactKind.revocation).isEmpty)
        #expect(reversed.of(AppleFactKind.refundReversed).map(\.ref) == ["5002"])
        // A share outside 0...100000 is no refund Apple makes: the transaction is quarantined, naming the field.
        let hostile = Self.transaction(extra: #","revocationDate":1709250000000,"revocationPercentage":150000"#)
        let translated = try notification("REFUND", transaction: hostile)
        #expect(translated.facts.of(AppleFactKind.revocation).isEmpty && translated.facts.of(AppleFactKind.period).isEmpty)
        #expect(translated.parts.contains { $0.detail.contains("revocationPercentage") })
    }

    /// A negative price is no charge Apple makes: the transaction is quarantined as a part, naming it, and
    /// revenue is never reduced by it.
    @Test func aNegativePriceIsQuarantined() throws {
        let hostile = Self.transaction().replacingOccurrences(of: #""price":4990"#, with: #""price":-4990"#)
        #expect(hostile.contains(#""price":-4990"#))
        let translated = try notification("DID_RENEW", transaction: hostile)
        #expect(translated.facts.of(AppleFactKind.period).isEmpty)
        #expect(translated.parts.contains { $0.detail.contains("transaction 5002 has an out-of-range price: -4990") }, "\(translated.parts)")
    }

    /// A signed transaction that expires, is refunded or is upgraded before its purchase is quarantined as a part,
    /// saying which; nothing of it is stated.
    @Test func aTransactionEndingBeforeItsPurchaseIsSetAside() throws {
        let before = Self.purchase - 60_000
        let cases: [(expires: Millis, extra: String, word: String)] = [
            (before, "", "expires at"),
            (Self.expires, #","revocationDate":\#(before),"revocationReason":0"#, "is revoked at"),
            (Self.expires, #","revocationDate":\#(before),"isUpgraded":true"#, "is upgraded at"),
        ]
        for (expires, extra, word) in cases {
            let translated = try notification("DID_RENEW", transaction: Self.transaction(expires: expires, extra: extra))
            #expect(translated.facts.of(AppleFactKind.period).isEmpty && translated.facts.of(AppleFactKind.revocation).isEmpty)
            #expect(translated.parts.contains { $0.detail.contains("transaction 5002 \(word)") && $0.detail.contains("before its purchase") },
                    "\(translated.parts)")
        }
    }

    /// Any offer of a signed transaction that is not a free trial is a paid offer: promotional (2), an offer code
    /// (3), a win-back offer (4), as the introductory one (1). Its period may be sold for another length than
    /// the plan (PAY_UP_FRONT), which the report's MRR then follows.
    @Test func everyPaidOfferTypeIsAnOffer() throws {
        for type in 1...4 {
            let offered = Self.transaction(extra: #","offerType":\#(type),"offerDiscountType":"PAY_UP_FRONT","offerIdentifier":"o\#(type)""#)
            let period = try #require(try notification("DID_RENEW", transaction: offered).facts.of(AppleFactKind.period).first)
            #expect(period.flags.contains(.introductory), "offerType \(type)")
        }
        let trial = Self.transaction(extra: #","offerType":2,"offerDiscountType":"FREE_TRIAL""#)
        let period = try #require(try notification("DID_RENEW", transaction: trial).facts.of(AppleFactKind.period).first)
        #expect(!period.flags.contains(.introductory) && period.flags.contains(.trial))
    }

    /// A refund of a transaction an upgrade had ended (a REFUND notification of it with `isUpgraded`) is a refund.
    /// Elsewhere a `revocationDate` beside `isUpgraded` is the upgrade, with or without a `revocationReason`
    /// (captured receipts carry a reason on upgrades too).
    @Test func aRefundOfAnUpgradedTransactionIsARefund() throws {
        let refunded = try notification("REFUND", transaction: Self.transaction(
            extra: #","revocationDate":1709250000000,"revocationReason":0,"isUpgraded":true"#)).facts
        #expect(refunded.of(AppleFactKind.revocation).map { "\($0.ref ?? "") \($0.at)" } == ["5002 1709250000000"])
        #expect(refunded.of(AppleFactKind.upgrade).isEmpty)
        for extra in [#","revocationDate":1709250000000,"isUpgraded":true"#,
                      #","revocationDate":1709250000000,"revocationReason":0,"isUpgraded":true"#] {
            let upgraded = try notification("DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", transaction: Self.transaction(extra: extra)).facts
            #expect(upgraded.of(AppleFactKind.revocation).isEmpty)
            #expect(upgraded.of(AppleFactKind.upgrade).map { "\($0.ref ?? "") \($0.at)" } == ["5002 1709250000000"])
        }
    }

    @Test func renewalExtended() throws {
        let extended = Self.transaction(expires: Self.expires + 7 * 86_400_000)
        let period = try #require(try notification("RENEWAL_EXTENDED", transaction: extended).facts.of(AppleFactKind.period).first)
        #expect(period.end == Self.expires + 7 * 86_400_000)
    }

    @Test func summariesAndExternalTokensStateNothing() throws {
        let summary = """
        {"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"u-1","version":"2.0",\
        "summary":{"requestIdentifier":"r-1","environment":"Production","appAppleId":1234567890,"bundleId":"com.example.app",\
        "productId":"premium_monthly","storefrontCountryCodes":["USA"],"succeededCount":5,"failedCount":0},"signedDate":\(Self.signedDate)}
        """
        #expect(translator.translate(record(.appleNotificationV2, jws: try chain.sign(summary))) == .used([]))
        let external = """
        {"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"UNREPORTED","notificationUUID":"u-2","version":"2.0",\
        "externalPurchaseToken":{"externalPurchaseId":"x","tokenCreationDate":1709000000000,"appAppleId":1234567890,\
        "bundleId":"com.example.app"},"signedDate":\(Self.signedDate)}
        """
        #expect(translator.translate(record(.appleNotificationV2, jws: try chain.sign(external))) == .used([]))
    }

    /// RESCIND_CONSENT (Apple's test payload `signedRescindConsentNotification.json`) carries `appData`, the app and
    /// its environment, in place of `data`: no transaction, so nothing stated, but the bundle and the environment
    /// are checked there like anywhere else.
    @Test func rescindConsentNamesItsBundleInAppData() throws {
        func rescind(bundle: String, environment: String) -> String {
            """
            {"notificationType":"RESCIND_CONSENT","notificationUUID":"002e14d5-51f5-4503-b5a8-c3a1af68eb20",\
            "appData":{"appAppleId":41234,"bundleId":"\(bundle)","environment":"\(environment)",\
            "signedAppTransactionInfo":"signed_app_transaction_info_value"},"version":"2.0","signedDate":\(Self.signedDate)}
            """
        }
        #expect(translator.translate(record(.appleNotificationV2, jws: try chain.sign(rescind(bundle: "com.example.app", environment: "Production"))))
                == .used([]))
        #expect(translator.translate(record(.appleNotificationV2, jws: try chain.sign(rescind(bundle: "com.example.app", environment: "Sandbox"))))
                == .excluded(.sandbox))
        #expect(translator.translate(record(.appleNotificationV2, jws: try chain.sign(rescind(bundle: "com.other.app", environment: "Production"))))
                .quarantineReason == .wrongBundle)
    }

    @Test func oneTimeCharge() throws {
        let consumable = Self.transaction(id: "6000", product: "coins_100", type: "Consumable", expires: nil)
        let facts = try notification("ONE_TIME_CHARGE", transaction: consumable, renewal: nil).facts
        let purchase = try #require(facts.of(AppleFactKind.oneTime).first)
        #expect(purchase.subject == "6000" && purchase.productId == "coins_100" && purchase.amountMicros == 4_990_000)
        #expect(facts.of(AppleFactKind.period).isEmpty)
    }

    /// A consumable bought three at a time: the signed `price` is already the three units' (Apple: "the total
    /// amount of the transaction for the quantity the customer purchased"), kept as stated beside the quantity.
    @Test func aConsumablesQuantityKeepsItsTotalPrice() throws {
        let three = Self.transaction(id: "6001", product: "coins_100", type: "Consumable", expires: nil)
            .replacingOccurrences(of: #""quantity":1"#, with: #""quantity":3"#)
            .replacingOccurrences(of: #""price":4990"#, with: #""price":14970"#)
        let facts = try notification("ONE_TIME_CHARGE", transaction: three, renewal: nil).facts
        let purchase = try #require(facts.of(AppleFactKind.oneTime).first)
        #expect(purchase.amountMicros == 14_970_000 && purchase.detail == "3")
        let history = AppleHistoryBuilder().history(id: "6001", facts: facts)
        #expect(history.purchases.map(\.quantity) == [3] && history.purchases.map(\.priceMicros) == [14_970_000])
    }

    @Test func exclusionsAndRejections() throws {
        #expect(try notification("TEST", transaction: nil, renewal: nil) == .excluded(.test))
        #expect(try notification("DID_RENEW", environment: "Sandbox") == .excluded(.sandbox))
        #expect(try notification("DID_RENEW", environment: "Xcode") == .excluded(.sandbox))
        #expect(try notification("DID_RENEW", environment: "LocalTesting") == .excluded(.sandbox))
        #expect(try notification("DID_RENEW", bundle: "com.other.app").quarantineReason == .wrongBundle)
        let family = Self.transaction().replacingOccurrences(of: "PURCHASED", with: "FAMILY_SHARED")
        #expect(try notification("DID_RENEW", transaction: family) == .excluded(.familyShared))

        let stranger = try TestChain()
        let forged = try stranger.sign(#"{"notificationType":"DID_RENEW","signedDate":1709300000000,"data":{"bundleId":"com.example.app","environment":"Production"}}"#)
        #expect(translator.translate(record(.appleNotificationV2, jws: forged)).quarantineReason == .badSignature)
        #expect(translator.translate(record(.appleNotificationV2, jws: "not.a.jws")).quarantineReason == .badSignature)
        let noType = try chain.sign(#"{"signedDate":1709300000000,"data":{"bundleId":"com.example.app"}}"#)
        #expect(translator.translate(record(.appleNotificationV2, jws: noType)).quarantineReason == .invalidPayload)
    }

    @Test func bareTransactionAndRenewalInfo() throws {
        let transaction = translator.translate(record(.appleTransaction, jws: try chain.sign(Self.transaction())))
        #expect(transaction.facts.of(AppleFactKind.period).map(\.ref) == ["5002"])
        let renewal = translator.translate(record(.appleRenewalInfo, jws: try chain.sign(Self.renewal(extra: #","gracePeriodExpiresDate":1710500000000,"isInBillingRetryPeriod":true"#))))
        // Dated at `renewalDate`, the latest purchase's expiry (E), not at the renewal info's own signing.
        let issue = try #require(renewal.facts.of(AppleFactKind.billingIssue).first)
        #expect(issue.at == Self.expires && issue.end == 1_710_500_000_000)
        let stranger = try TestChain()
        #expect(translator.translate(record(.appleTransaction, jws: try stranger.sign(Self.transaction()))).quarantineReason == .badSignature)
    }

    /// Polled after Apple gave up retrying: the retry flag false and intent 2 (billing error) beside a grace end
    /// that has passed (an archive may keep it): the episode was lost by the statement, not still in grace.
    @Test func retryOverBesideAPassedGraceEndLosesTheEpisode() throws {
        let graceEnd: Millis = 1_709_250_000_000
        let stated = translator.translate(record(.appleRenewalInfo, jws: try chain.sign(Self.renewal(
            extra: #","isInBillingRetryPeriod":false,"expirationIntent":2,"gracePeriodExpiresDate":\#(graceEnd)"#, autoRenew: 0))))
        let issue = try #require(stated.facts.of(AppleFactKind.billingIssue).first)
        #expect(issue.at == Self.expires && issue.end == graceEnd)
        #expect(stated.facts.of(AppleFactKind.expiry).map(\.at) == [Self.signedDate])
        // While the grace still runs, the same flags are a billing issue in grace, nothing lost yet.
        let inGrace = translator.translate(record(.appleRenewalInfo, jws: try chain.sign(Self.renewal(
            extra: #","isInBillingRetryPeriod":false,"expirationIntent":2,"gracePeriodExpiresDate":1710500000000"#))))
        #expect(inGrace.facts.of(AppleFactKind.billingIssue).map(\.end) == [1_710_500_000_000])
        #expect(inGrace.facts.of(AppleFactKind.expiry).isEmpty)
    }

    @Test func graceThenRecoveryBuildsARecoveredEpisode() throws {
        let failed = try notification("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD",
                                      renewal: Self.renewal(extra: #","isInBillingRetryPeriod":true,"gracePeriodExpiresDate":1710500000000"#)).facts
        let recoveredAt = Self.expires + 2 * 86_400_000
        let recovery = Self.transaction(id: "5003", expires: Self.expires + 29 * 86_400_000)
            .replacingOccurrences(of: #""purchaseDate":\#(Self.purchase)"#, with: #""purchaseDate":\#(recoveredAt)"#)
        let recovered = try notification("DID_RENEW", subtype: "BILLING_RECOVERY", transaction: recovery).facts
        let history = AppleHistoryBuilder().history(id: "5000", facts: recovered + failed)
        #expect(history.episodes == [BillingEpisode(failedAt: Self.expires, graceEnd: 1_710_500_000_000,
                                                    outcome: .recovered(at: recoveredAt))])
        #expect(history.periods.map(\.id) == ["5002", "5003"])

        // Without the DID_FAIL_TO_RENEW in the archive (missed, or archived only later), the recovery alone opens
        // the episode at the previous period's end: recovered, in billing retry (no grace is known).
        let alone = AppleHistoryBuilder().history(id: "5000", facts: recovered + (try notification("SUBSCRIBED", subtype: "INITIAL_BUY").facts))
        #expect(alone.episodes == [BillingEpisode(failedAt: Self.expires, graceEnd: Self.expires, outcome: .recovered(at: recoveredAt))])
        // Archived from mid-life, the period that failed may be missing: no episode is made up, at the recovered
        // period's own start or at an end further back than Apple retries.
        #expect(AppleHistoryBuilder().history(id: "5000", facts: recovered).episodes.isEmpty)
        let muchLater = Self.expires + 61 * 86_400_000
        let late = try notification("DID_RENEW", subtype: "BILLING_RECOVERY", transaction: Self.transaction(id: "5004", expires: muchLater + 30 * 86_400_000)
            .replacingOccurrences(of: #""purchaseDate":\#(Self.purchase)"#, with: #""purchaseDate":\#(muchLater)"#)).facts
        #expect(AppleHistoryBuilder().history(id: "5000", facts: late + (try notification("SUBSCRIBED", subtype: "INITIAL_BUY").facts))
            .episodes.isEmpty)
    }

    /// A Get Transaction Info response (`TransactionInfoResponse`, GET /inApps/v1/transactions/{id}) holds one
    /// signed transaction: read as that transaction, sniffed or under `apple.transaction`.
    @Test func aTransactionInfoResponseIsItsTransaction() throws {
        let response = #"{"signedTransactionInfo":"\#(try chain.sign(Self.transaction()))"}"#
        let named = translator.translate(try record(.appleTransaction, json: response))
        #expect(named.facts.of(AppleFactKind.period).map(\.ref) == ["5002"])
        let sniffed = try #require(try AppStorePayloads().recognize(JSONParser.parse(Array(response.utf8))))
        #expect(sniffed.source == .appleTransaction)
        #expect(translator.translate(record(.appleTransaction, jws: try #require(sniffed.jws?.text))).facts.of(AppleFactKind.period).map(\.ref)
                == ["5002"])
        #expect(translator.translate(try record(.appleTransaction, json: #"{"signedTransactions":[]}"#)).quarantineReason == .invalidPayload)
    }
}
