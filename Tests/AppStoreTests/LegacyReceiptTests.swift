import AppStore
import Facts
import Ingest
import Testing

/// verifyReceipt responses: the legacy traps, each with a payload shaped as Apple sends it.
@Suite struct LegacyReceiptTests {
    let translator: AppStoreTranslator

    init() throws {
        translator = try AppStoreTranslator(trustedRoots: AppStoreTranslator.appleRootCAG3, bundleIds: ["com.example.app"], times: testTimes)
    }

    /// A production response: a consumable and a non-consumable (no expiry fields) next to subscription
    /// entries, numbers as strings, `cancellation_date_ms: "0"`-style "not cancelled", an entry repeated in
    /// `in_app` and `latest_receipt_info`.
    static let mixed = #"""
    {"status": 0, "environment": "Production",
     "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app", "request_date_ms": "1709290000000",
       "in_app": [
         {"quantity": "1", "product_id": "coins_100", "transaction_id": "1000000500", "original_transaction_id": "1000000500",
          "purchase_date": "2024-01-12 08:00:00 Etc/GMT", "purchase_date_ms": "1705046400000", "is_trial_period": "false"},
         {"quantity": "1", "product_id": "remove_ads", "transaction_id": "1000000501", "original_transaction_id": "1000000501",
          "purchase_date_ms": "1705050000000", "is_trial_period": "false", "in_app_ownership_type": "PURCHASED"},
         {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "1000000600", "original_transaction_id": "1000000600",
          "purchase_date_ms": "1704880800000", "expires_date_ms": "1705485600000", "is_trial_period": "true",
          "web_order_line_item_id": "230000000001"}
       ]},
     "latest_receipt_info": [
       {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "1000000600", "original_transaction_id": "1000000600",
        "purchase_date_ms": "1704880800000", "expires_date_ms": "1705485600000", "is_trial_period": "true",
        "is_in_intro_offer_period": "false", "cancellation_date_ms": "0", "in_app_ownership_type": "PURCHASED"},
       {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "1000000601", "original_transaction_id": "1000000600",
        "purchase_date": "2024-01-17 10:00:00 Etc/GMT", "purchase_date_ms": "1705485600000",
        "expires_date": "2024-02-17 10:00:00 Etc/GMT", "expires_date_ms": "1708164000000",
        "is_trial_period": "false", "is_in_intro_offer_period": "false", "in_app_ownership_type": "PURCHASED"}
     ],
     "pending_renewal_info": [
       {"auto_renew_product_id": "premium_monthly", "original_transaction_id": "1000000600",
        "product_id": "premium_monthly", "auto_renew_status": "1"}
     ]}
    """#

    /// A yearly plan upgraded to a monthly one after two months: the yearly transaction (`is_upgraded`) was sold to
    /// run to 2025, but ended at the upgrade. The billing issue `pending_renewal_info` states is at the monthly
    /// plan's latest end, with its grace; fetched after the retry ended, the episode is lost at that fetch.
    @Test func aBillingIssueAfterAnUpgradeIsAtTheNewPlansEnd() throws {
        func receipt(requested: String, pending: String) -> String {
            """
            {"status":0,"environment":"Production","receipt":{"receipt_type":"Production","bundle_id":"com.example.app",\
            "request_date_ms":"\(ms(requested))","in_app":[]},"latest_receipt_info":[\
            {"quantity":"1","product_id":"monthly_premium","transaction_id":"7003","original_transaction_id":"7001",\
            "purchase_date_ms":"\(ms("2024-04-01 00:00"))","expires_date_ms":"\(ms("2024-05-01 00:00"))","is_trial_period":"false"},\
            {"quantity":"1","product_id":"monthly_premium","transaction_id":"7002","original_transaction_id":"7001",\
            "purchase_date_ms":"\(ms("2024-03-01 00:00"))","expires_date_ms":"\(ms("2024-04-01 00:00"))","is_trial_period":"false"},\
            {"quantity":"1","product_id":"yearly_basic","transaction_id":"7001","original_transaction_id":"7001",\
            "purchase_date_ms":"\(ms("2024-01-01 00:00"))","expires_date_ms":"\(ms("2025-01-01 00:00"))","is_trial_period":"false",\
            "cancellation_date_ms":"\(ms("2024-03-01 00:00"))","cancellation_reason":"0","is_upgraded":"true"}],\
            "pending_renewal_info":[{"original_transaction_id":"7001","product_id":"monthly_premium",\
            "auto_renew_product_id":"monthly_premium","auto_renew_status":"1",\(pending)}]}
            """
        }
        let inGrace = translator.translate(try record(.appleVerifyReceipt, json: receipt(requested: "2024-05-03 00:00", pending: """
            "is_in_billing_retry_period":"1","expiration_intent":"2","grace_period_expires_date_ms":"\(ms("2024-05-17 00:00"))"
            """))).facts
        let issue = try #require(inGrace.of(AppleFactKind.billingIssue).first)
        #expect(issue.at == ms("2024-05-01 00:00") && issue.end == ms("2024-05-17 00:00"))
        #expect(inGrace.of(AppleFactKind.expiry).isEmpty)
        let over = translator.translate(try record(.appleVerifyReceipt, json: receipt(requested: "2024-06-20 00:00", pending: """
            "is_in_billing_retry_period":"0","expiration_intent":"2"
            """))).facts
        #expect(over.of(AppleFactKind.billingIssue).map(\.at) == [ms("2024-05-01 00:00")])
        let lost = try #require(over.of(AppleFactKind.expiry).first)
        #expect(lost.at == ms("2024-06-20 00:00") && lost.detail == "billing" && lost.end == ms("2024-05-01 00:00"))
        // Receipts state `cancellation_date` only for refunds in Apple's later documentation: an upgraded entry
        // without one ends no later than the plan that replaced it.
        let undated = receipt(requested: "2024-05-03 00:00", pending: """
            "is_in_billing_retry_period":"1","expiration_intent":"2","grace_period_expires_date_ms":"\(ms("2024-05-17 00:00"))"
            """).replacingOccurrences(of: #""cancellation_date_ms":"\#(ms("2024-03-01 00:00"))","cancellation_reason":"0","#, with: "")
        #expect(!undated.contains("cancellation_date_ms"))
        let withoutDate = translator.translate(try record(.appleVerifyReceipt, json: undated)).facts
        #expect(withoutDate.of(AppleFactKind.billingIssue).map(\.at) == [ms("2024-05-01 00:00")])
        #expect(withoutDate.of(AppleFactKind.billingIssue).first?.end == ms("2024-05-17 00:00"))
    }

    @Test func mixedReceiptSeparatesOneTimePurchasesFromPeriods() throws {
        let facts = translator.translate(try record(.appleVerifyReceipt, json: Self.mixed,
                                                    envelope: Envelope(appUserId: "u-1", currency: "JPY"))).facts
        let periods = facts.of(AppleFactKind.period)
        #expect(periods.map(\.ref) == ["1000000600", "1000000601"])
        #expect(periods.allSatisfy { $0.subject == "1000000600" && $0.observedAt == 1_709_290_000_000 })
        #expect(periods[0].at == ms("2024-01-10 10:00") && periods[0].end == ms("2024-01-17 10:00"))
        #expect(periods[0].flags == [.trial])
        #expect(periods[0].detail == nil)  // latest_receipt_info's copy wins over in_app's
        #expect(periods[1].at == ms("2024-01-17 10:00") && periods[1].end == ms("2024-02-17 10:00"))
        #expect(periods[1].flags == [] && periods[1].currency == "JPY" && periods[1].amountMicros == nil)

        let oneTime = facts.of(AppleFactKind.oneTime)
        #expect(oneTime.map(\.subject) == ["1000000500", "1000000501"])
        #expect(oneTime.map(\.productId) == ["coins_100", "remove_ads"])
        #expect(oneTime[0].at == ms("2024-01-12 08:00"))
        #expect(facts.of(AppleFactKind.revocation).isEmpty)  // cancellation_date_ms "0" is "not cancelled"

        let status = facts.of(AppleFactKind.renewalStatus)
        #expect(status.count == 1 && status[0].flags == [.on] && status[0].at == 1_709_290_000_000)
        #expect(facts.of(AppleFactKind.user).contains { $0.subject == "1000000600" && $0.ref == "u-1" })
        #expect(facts.of(AppleFactKind.currency).first?.currency == "JPY")
    }

    /// A receipt prices nothing, and a period bought under an introductory price, a promotional offer
    /// (`promotional_offer_id`) or an offer code (`offer_code_ref_name`) may have cost less than the list price: each
    /// is a paid offer (`.introductory`), which the report counts among offers priced from the list. A plain
    /// renewal is not, nor is a free trial.
    @Test func offersOfAReceiptArePaidOffers() throws {
        func entry(_ id: Int, _ from: String, _ to: String, _ extra: String) -> String {
            """
            {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "\(id)", "original_transaction_id": "1000000700",
             "purchase_date_ms": "\(ms(from))", "expires_date_ms": "\(ms(to))", "is_trial_period": "false"\(extra)}
            """
        }
        let entries = [
            entry(1000000700, "2024-01-01 00:00", "2024-02-01 00:00", #", "is_in_intro_offer_period": "true""#),
            entry(1000000701, "2024-02-01 00:00", "2024-03-01 00:00", #", "is_in_intro_offer_period": "false", "promotional_offer_id": "winback_50""#),
            entry(1000000702, "2024-03-01 00:00", "2024-04-01 00:00", #", "is_in_intro_offer_period": "false", "offer_code_ref_name": "SPRING""#),
            entry(1000000703, "2024-04-01 00:00", "2024-05-01 00:00", #", "is_in_intro_offer_period": "false", "promotional_offer_id": """#),
        ]
        let json = #"{"status": 0, "environment": "Production", "receipt": {"bundle_id": "com.example.app", "request_date_ms": "1714521600000", "in_app": []}, "latest_receipt_info": ["#
            + entries.joined(separator: ",") + "]}"
        let periods = translator.translate(try record(.appleVerifyReceipt, json: json)).facts.of(AppleFactKind.period)
        #expect(periods.map(\.ref) == ["1000000700", "1000000701", "1000000702", "1000000703"])
        #expect(periods.map(\.flags) == [.introductory, .introductory, .introductory, []])
    }

    /// An entry that expires before its purchase, or is cancelled before it, states times no transaction has: it is
    /// quarantined as a part, naming both times, and the other entries are read. Dropped without a word, it would
    /// take a copy under its `web_order_line_item_id` with it.
    @Test func anEntryEndingBeforeItsPurchaseIsSetAside() throws {
        func entry(_ id: Int, _ from: String, _ to: String, _ extra: String = "") -> String {
            """
            {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "\(id)", "original_transaction_id": "1000000800",
             "purchase_date_ms": "\(ms(from))", "expires_date_ms": "\(ms(to))", "web_order_line_item_id": "\(id + 5)"\(extra)}
            """
        }
        let entries = [
            entry(1000000800, "2024-01-01 00:00", "2024-02-01 00:00"),
            entry(1000000801, "2024-02-01 00:00", "2024-01-31 00:00"),
            entry(1000000802, "2024-02-01 00:00", "2024-03-01 00:00",
                  #", "cancellation_date_ms": "\#(ms("2024-01-15 00:00"))", "is_upgraded": "true""#),
        ]
        let json = #"{"status": 0, "environment": "Production", "receipt": {"bundle_id": "com.example.app", "request_date_ms": "1714521600000", "in_app": []}, "latest_receipt_info": ["#
            + entries.joined(separator: ",") + "]}"
        let translated = translator.translate(try record(.appleVerifyReceipt, json: json))
        #expect(translated.facts.of(AppleFactKind.period).map(\.ref) == ["1000000800"])
        #expect(translated.parts.map(\.detail).sorted() == [
            "transaction 1000000801 expires at 2024-01-31T00:00:00.000Z, before its purchase at 2024-02-01T00:00:00.000Z",
            "transaction 1000000802 is upgraded at 2024-01-15T00:00:00.000Z, before its purchase at 2024-02-01T00:00:00.000Z",
        ], "\(translated.parts)")
    }

    /// After "Restore Purchases" (`restoreCompletedTransactions`) on a new device the receipt holds each
    /// transaction again under a new `transaction_id`: a subscription's with the same dates and
    /// `web_order_line_item_id`, a non-consumable's dated at the restore with its `original_purchase_date`.
    @Test func restoredTransactionsAreTheirOriginalPurchases() throws {
        let restored = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app", "request_date_ms": "1709290000000",
           "in_app": [
             {"quantity": "1", "product_id": "remove_ads", "transaction_id": "1000000501", "original_transaction_id": "1000000501",
              "purchase_date_ms": "1705050000000", "original_purchase_date_ms": "1705050000000"},
             {"quantity": "1", "product_id": "remove_ads", "transaction_id": "1000000902", "original_transaction_id": "1000000501",
              "purchase_date_ms": "1709200000000", "original_purchase_date_ms": "1705050000000"}
           ]},
         "latest_receipt_info": [
           {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "1000000601", "original_transaction_id": "1000000600",
            "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000", "web_order_line_item_id": "230000000002",
            "is_trial_period": "false"},
           {"quantity": "1", "product_id": "premium_monthly", "transaction_id": "1000000901", "original_transaction_id": "1000000600",
            "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000", "web_order_line_item_id": "230000000002",
            "is_trial_period": "false", "cancellation_date_ms": "1706000000000", "cancellation_reason": "0"}
         ]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: restored)).facts
        let oneTime = facts.of(AppleFactKind.oneTime)
        // Both entries state the same purchase: one fact.
        #expect(oneTime.map(\.ref) == ["1000000501"])
        #expect(oneTime.allSatisfy { $0.subject == "1000000501" && $0.at == 1_705_050_000_000 })
        let purchases = AppleHistoryBuilder().history(id: "1000000501", facts: facts.filter { $0.subject == "1000000501" }).purchases
        #expect(purchases.map(\.id) == ["1000000501"])

        // The refund stated on the restored copy refunds the one period, named by the id issued first.
        let history = AppleHistoryBuilder().history(id: "1000000600", facts: facts.filter { $0.subject == "1000000600" })
        #expect(history.periods.map(\.id) == ["1000000601"])
        #expect(history.periods.map(\.revokedAt) == [1_706_000_000_000])
    }

    /// A captured production receipt (a public project's fixture, trimmed): the monthly plan renewed at 20:55, but
    /// the user had bought the yearly plan at 17:28 the same day; Apple then cancelled the renewal as upgraded.
    @Test func anUpgradeJustBeforeARenewalKeepsTheNewPlan() throws {
        let receipt = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app", "request_date_ms": "1595332850170", "in_app": []},
         "latest_receipt_info": [
           {"quantity": "1", "product_id": "1tb_1m", "transaction_id": "240000764470830", "original_transaction_id": "240000749927149",
            "purchase_date_ms": "1591736143000", "expires_date_ms": "1594328143000", "web_order_line_item_id": "240000285688382",
            "is_trial_period": "false", "cancellation_date_ms": "1591752596000", "cancellation_reason": "0", "is_upgraded": "true"},
           {"quantity": "1", "product_id": "1tb_1y", "transaction_id": "240000764573178", "original_transaction_id": "240000749927149",
            "purchase_date_ms": "1591723711000", "expires_date_ms": "1623259711000", "web_order_line_item_id": "240000285723941",
            "is_trial_period": "false"},
           {"quantity": "1", "product_id": "1tb_1m", "transaction_id": "240000749927149", "original_transaction_id": "240000749927149",
            "purchase_date_ms": "1589057743000", "expires_date_ms": "1591736143000", "web_order_line_item_id": "240000285688381",
            "is_trial_period": "false"}
         ],
         "pending_renewal_info": [{"auto_renew_product_id": "1tb_1y", "original_transaction_id": "240000749927149",
                                   "product_id": "1tb_1y", "auto_renew_status": "1"}]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: receipt)).facts
        let history = AppleHistoryBuilder().history(id: "240000749927149", facts: facts)
        let yearly = try #require(history.periods.first { $0.productId == "1tb_1y" })
        #expect(yearly.start == 1_591_723_711_000 && yearly.end == 1_623_259_711_000 && yearly.revokedAt == nil)
        // The first month ends where the yearly plan starts; the upgraded renewal ends as replaced.
        #expect(history.periods.filter { $0.productId == "1tb_1m" }.map(\.end) == [1_591_723_711_000, 1_591_752_596_000])
        #expect(history.periods.filter { $0.productId == "1tb_1m" }.map(\.endReason) == [.replaced, .replaced])
    }

    /// Apple dates an upgrade's cancellation and the new purchase separately: three seconds apart here.
    @Test func aGapAfterAnUpgradeIsBridged() throws {
        let receipt = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app", "request_date_ms": "1677000000000", "in_app": []},
         "latest_receipt_info": [
           {"quantity": "1", "product_id": "m1", "transaction_id": "801", "original_transaction_id": "800",
            "purchase_date_ms": "1675245600000", "expires_date_ms": "1677664800000", "web_order_line_item_id": "9801",
            "cancellation_date_ms": "1676887200000", "cancellation_reason": "0", "is_upgraded": "true"},
           {"quantity": "1", "product_id": "pro", "transaction_id": "802", "original_transaction_id": "800",
            "purchase_date_ms": "1676887203000", "expires_date_ms": "1679306403000", "web_order_line_item_id": "9802"}
         ]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: receipt)).facts
        let history = AppleHistoryBuilder().history(id: "800", facts: facts)
        #expect(history.periods.map(\.end) == [1_676_887_203_000, 1_679_306_403_000])
        #expect(history.periods.first?.endReason == .replaced)
    }

    @Test func upgradeIsNotARefund() throws {
        let json = #"""
        {"status": 0, "environment": "Production", "receipt": {"request_date_ms": "1709290000000", "in_app": []},
         "latest_receipt_info": [
          {"product_id": "premium_monthly", "transaction_id": "700", "original_transaction_id": "700",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000",
           "cancellation_date_ms": "1706000000000", "cancellation_reason": "0", "is_upgraded": "true"},
          {"product_id": "premium_yearly", "transaction_id": "701", "original_transaction_id": "700",
           "purchase_date_ms": "1706000000000", "expires_date_ms": "1737536000000"}]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        let periods = facts.of(AppleFactKind.period)
        // The period keeps the expiry it was sold with; the upgrade is a fact of its own, not a revocation.
        #expect(periods[0].end == 1_708_164_000_000 && periods[0].flags == [.upgraded])
        #expect(facts.of(AppleFactKind.upgrade).map { [$0.ref, String($0.at)] } == [["700", "1706000000000"]])
        #expect(facts.of(AppleFactKind.revocation).isEmpty)

        let history = AppleHistoryBuilder().history(id: "700", facts: facts)
        #expect(history.periods.map(\.id) == ["700", "701"])
        #expect(history.periods[0].end == 1_706_000_000_000 && history.periods[0].scheduledEnd == 1_708_164_000_000)
        #expect(history.periods[0].endReason == .replaced && history.periods[0].revokedAt == nil)
    }

    @Test func cancellationWithoutUpgradeIsARefund() throws {
        let json = #"""
        {"status": "0", "receipt": {"request_date_ms": 1709290000000, "in_app": [
          {"product_id": "premium_monthly", "transaction_id": "800", "original_transaction_id": "800",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000",
           "cancellation_date_ms": "1706000000000", "cancellation_reason": "1"}]}}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        let revocations = facts.of(AppleFactKind.revocation)
        #expect(revocations.count == 1)
        #expect(revocations[0].ref == "800" && revocations[0].at == 1_706_000_000_000 && revocations[0].detail == "100000")
        let history = AppleHistoryBuilder().history(id: "800", facts: facts)
        #expect(history.periods.first?.revokedAt == 1_706_000_000_000)
        #expect(history.periods.first?.end == 1_708_164_000_000)
    }

    @Test func iOS6StyleResponse() throws {
        let json = #"""
        {"status": 0, "receipt": {"original_transaction_id": "900", "transaction_id": "900", "product_id": "premium_weekly",
          "purchase_date_ms": "1708927200000", "expires_date": "1709532000000", "bid": "com.example.app"},
         "latest_receipt_info": {"original_transaction_id": "900", "transaction_id": "901", "product_id": "premium_weekly",
          "purchase_date_ms": "1709532000000", "expires_date": 1710136800000}}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json,
                                                    envelope: Envelope(receivedAt: 1_710_000_000_000))).facts
        let periods = facts.of(AppleFactKind.period)
        #expect(periods.map(\.ref) == ["900", "901"])
        #expect(periods.map(\.end) == [1_709_532_000_000, 1_710_136_800_000])
        #expect(periods.allSatisfy { $0.subject == "900" && $0.observedAt == 1_710_000_000_000 })
    }

    @Test func nonZeroStatusSandboxAndFamilySharingAreExcluded() throws {
        #expect(translator.translate(try record(.appleVerifyReceipt, json: #"{"status": 21007}"#)) == .excluded(.receiptStatus))
        let sandbox = #"{"status": 0, "environment": "Sandbox", "receipt": {"in_app": []}}"#
        #expect(translator.translate(try record(.appleVerifyReceipt, json: sandbox)) == .excluded(.sandbox))
        let productionSandbox = #"{"status": 0, "receipt": {"receipt_type": "ProductionSandbox", "in_app": []}}"#
        #expect(translator.translate(try record(.appleVerifyReceipt, json: productionSandbox)) == .excluded(.sandbox))
        let family = #"""
        {"status": 0, "receipt": {"in_app": []}, "latest_receipt_info": [
          {"product_id": "premium_monthly", "transaction_id": "1", "original_transaction_id": "1",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000", "in_app_ownership_type": "FAMILY_SHARED"}]}
        """#
        #expect(translator.translate(try record(.appleVerifyReceipt, json: family)) == .excluded(.familyShared))
    }

    @Test func familySharedEntriesNextToPurchasedOnesAreSkipped() throws {
        let json = #"""
        {"status": 0, "receipt": {"request_date_ms": "1709290000000", "in_app": []}, "latest_receipt_info": [
          {"product_id": "premium_monthly", "transaction_id": "1", "original_transaction_id": "1",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000", "in_app_ownership_type": "FAMILY_SHARED"},
          {"product_id": "premium_monthly", "transaction_id": "2", "original_transaction_id": "2",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000", "in_app_ownership_type": "PURCHASED"}]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        #expect(facts.of(AppleFactKind.period).map(\.ref) == ["2"])
    }

    @Test func retryAndGraceInPendingRenewalInfo() throws {
        let json = #"""
        {"status": 0, "receipt": {"request_date_ms": "1708300000000", "in_app": []},
         "latest_receipt_info": [{"product_id": "premium_monthly", "transaction_id": "10", "original_transaction_id": "10",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000"}],
         "pending_renewal_info": [{"original_transaction_id": "10", "auto_renew_product_id": "premium_monthly",
           "auto_renew_status": "1", "is_in_billing_retry_period": "1", "expiration_intent": "2",
           "grace_period_expires_date_ms": "1709546400000"}]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        let issues = facts.of(AppleFactKind.billingIssue)
        #expect(issues.count == 1)
        #expect(issues[0].at == 1_708_164_000_000 && issues[0].end == 1_709_546_400_000)
        #expect(facts.of(AppleFactKind.expiry).isEmpty)  // intent 2 while retrying is not an end
    }

    /// A grace end left over from an episode the next renewal closed (earlier than the latest expiry) opens no
    /// billing issue at that expiry.
    @Test func aGraceEndBeforeTheLatestExpiryIsNotANewIssue() throws {
        let json = #"""
        {"status": 0, "receipt": {"request_date_ms": "1710000000000", "in_app": []},
         "latest_receipt_info": [{"product_id": "premium_monthly", "transaction_id": "10", "original_transaction_id": "10",
           "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000"},
          {"product_id": "premium_monthly", "transaction_id": "11", "original_transaction_id": "10",
           "purchase_date_ms": "1708300000000", "expires_date_ms": "1710978400000"}],
         "pending_renewal_info": [{"original_transaction_id": "10", "auto_renew_product_id": "premium_monthly",
           "auto_renew_status": "1", "grace_period_expires_date_ms": "1708596000000"}]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        #expect(facts.of(AppleFactKind.billingIssue).isEmpty)
        #expect(facts.of(AppleFactKind.period).map(\.ref) == ["10", "11"])
    }

    @Test func expirationIntentsAreKeptEvenWhenUnknown() throws {
        func expiry(intent: String) throws -> String? {
            let json = """
            {"status": 0, "receipt": {"request_date_ms": "1709300000000", "in_app": []},
             "latest_receipt_info": [{"product_id": "p", "transaction_id": "10", "original_transaction_id": "10",
               "purchase_date_ms": "1705485600000", "expires_date_ms": "1708164000000"}],
             "pending_renewal_info": [{"original_transaction_id": "10", "auto_renew_status": "0", "expiration_intent": "\(intent)"}]}
            """
            let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
            return facts.of(AppleFactKind.expiry).first?.detail
        }
        #expect(try expiry(intent: "1") == "voluntary")
        #expect(try expiry(intent: "3") == "price_increase")
        #expect(try expiry(intent: "4") == "product_unavailable")
        #expect(try expiry(intent: "5") == "other")
        #expect(try expiry(intent: "7") == "7")
    }

    /// `quantity` of a consumable, a numeric string in receipts: kept, and the history's purchase counts three
    /// units. A quantity that is no count sets its entry aside as a part and the rest is used; a subscription
    /// entry's quantity is not read (it is always 1, and nothing depends on it).
    @Test func aConsumablesQuantityIsKeptAndAnImpossibleOneSetAside() throws {
        let receipt = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app", "request_date_ms": "1709290000000",
           "in_app": [
             {"quantity": "3", "product_id": "coins_100", "transaction_id": "1000000700", "original_transaction_id": "1000000700",
              "purchase_date_ms": "1705046400000", "is_trial_period": "false"},
             {"quantity": "0", "product_id": "coins_100", "transaction_id": "1000000701", "original_transaction_id": "1000000701",
              "purchase_date_ms": "1705046500000", "is_trial_period": "false"},
             {"quantity": "x", "product_id": "premium_monthly", "transaction_id": "1000000800", "original_transaction_id": "1000000800",
              "purchase_date_ms": "1704880800000", "expires_date_ms": "1705485600000", "is_trial_period": "false"}
           ]}}
        """#
        let translation = translator.translate(try record(.appleVerifyReceipt, json: receipt))
        guard case .used(let facts, let parts) = translation else {
            Issue.record("not used: \(translation)")
            return
        }
        #expect(parts.map(\.path) == ["receipt.in_app[1]"])
        #expect(parts.first?.detail.contains("quantity of transaction 1000000701 is 0") == true)
        #expect(facts.of(AppleFactKind.period).map(\.ref) == ["1000000800"])
        let history = AppleHistoryBuilder().history(id: "1000000700", facts: facts.filter { $0.subject == "1000000700" })
        #expect(history.purchases.map(\.quantity) == [3] && history.purchases.map(\.priceMicros) == [nil])
        // `true` is no count, though JSON readers that take 1 for it would.
        let boolean = receipt.replacingOccurrences(of: #"{"quantity": "0""#, with: #"{"quantity": true"#)
        guard case .used(_, let booleanParts) = translator.translate(try record(.appleVerifyReceipt, json: boolean)) else {
            Issue.record("not used")
            return
        }
        #expect(booleanParts.first?.detail.contains("quantity of transaction 1000000701 is a JSON boolean") == true,
                "\(booleanParts.map(\.detail))")
    }

    @Test func brokenEntriesAreQuarantinedNotCrashed() throws {
        let noId = #"{"status": 0, "receipt": {"in_app": [{"product_id": "p", "purchase_date_ms": "1"}]}}"#
        #expect(translator.translate(try record(.appleVerifyReceipt, json: noId)).quarantineReason == .invalidPayload)
        let badExpiry = #"""
        {"status": 0, "receipt": {"in_app": [{"product_id": "p", "transaction_id": "1", "purchase_date_ms": "1705485600000",
          "expires_date_ms": "soon"}]}}
        """#
        #expect(translator.translate(try record(.appleVerifyReceipt, json: badExpiry)).quarantineReason == .invalidPayload)
        #expect(translator.translate(try record(.appleVerifyReceipt, json: #"{"receipt": {}}"#)).quarantineReason == .invalidPayload)
        #expect(translator.translate(try record(.appleVerifyReceipt, json: "[1, 2]")).quarantineReason == .invalidPayload)
    }
}
