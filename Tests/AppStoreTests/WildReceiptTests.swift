import AppStore
import Facts
import Ingest
import Testing

/// App Store records as they exist in the wild (issue 13, issue 18): container members sent as `{}` or `null`,
/// one unusable transaction beside usable ones, records without an envelope, and times no store sends. Shapes
/// follow Apple's App Store Receipts `responseBody` (verifyReceipt: `receipt.in_app`, `latest_receipt_info`,
/// `pending_renewal_info`) and App Store Server Notifications `responseBodyV1` / `unified_receipt` and
/// `responseBodyV2DecodedPayload` (`data` is absent for RENEWAL_EXTENSION summaries, so a reader must expect it
/// missing).
@Suite struct WildReceiptTests {
    let translator: AppStoreTranslator

    init() throws {
        translator = try AppStoreTranslator(trustedRoots: AppStoreTranslator.appleRootCAG3, bundleIds: [], times: testTimes)
    }

    static let received: Millis = 1_709_800_002_000

    static func v1(latest: String, pending: String = #"[{"original_transaction_id": "2000", "auto_renew_status": "0"}]"#) -> String {
        """
        {"notification_type": "DID_CHANGE_RENEWAL_STATUS", "environment": "PROD", "password": "shared-secret",
         "bid": "com.example.app", "bvrs": "42", "auto_renew_product_id": "premium_weekly", "auto_renew_status": "false",
         "auto_renew_status_change_date_ms": "1709800000000", "original_transaction_id": "2000",
         "unified_receipt": {"status": 0, "environment": "Production", "latest_receipt": "MIIT...",
           "latest_receipt_info": \(latest), "pending_renewal_info": \(pending)}}
        """
    }

    static let entry2001 = #"{"product_id": "premium_weekly", "transaction_id": "2001", "original_transaction_id": "2000", "purchase_date_ms": "1709445600000", "expires_date_ms": "1710050400000", "is_trial_period": "false", "in_app_ownership_type": "PURCHASED"}"#
    static let entry2000 = #"{"product_id": "premium_weekly", "transaction_id": "2000", "original_transaction_id": "2000", "purchase_date_ms": "1708840800000", "expires_date_ms": "1709445600000", "is_trial_period": "false", "in_app_ownership_type": "PURCHASED"}"#

    /// Issue 13, class 3: `latest_receipt_info` sent as `{}` or `null` quarantined the whole notification and lost
    /// the renewal-status change beside it.
    @Test(arguments: ["{}", "null", "[]"])
    func anEmptyReceiptListIsNoEntries(_ empty: String) throws {
        let translation = translator.translate(try record(.appleNotificationV1, json: Self.v1(latest: empty),
                                                          envelope: Envelope(receivedAt: Self.received)))
        #expect(translation.quarantineReason == nil)
        #expect(translation.parts.isEmpty)
        #expect(translation.facts.of(AppleFactKind.renewalStatus).map(\.at) == [1_709_800_000_000, 1_709_800_002_000])
        #expect(translation.facts.of(AppleFactKind.period).isEmpty)
        let noPending = translator.translate(try record(.appleNotificationV1, json: Self.v1(latest: empty, pending: empty),
                                                        envelope: Envelope(receivedAt: Self.received)))
        #expect(noPending.facts.of(AppleFactKind.renewalStatus).map(\.at) == [1_709_800_000_000])
    }

    @Test func oneBadTransactionIsAPartTheOthersAreUsed() throws {
        let noProduct = Self.entry2001.replacingOccurrences(of: #""product_id": "premium_weekly", "#, with: "")
        let translation = translator.translate(try record(.appleNotificationV1,
                                                          json: Self.v1(latest: "[\(noProduct), \(Self.entry2000), \"garbage\"]"),
                                                          envelope: Envelope(receivedAt: Self.received)))
        #expect(translation.facts.of(AppleFactKind.period).map(\.ref) == ["2000"])
        #expect(translation.parts.map(\.path) == ["unified_receipt.latest_receipt_info[0]", "unified_receipt.latest_receipt_info[2]"])
        #expect(translation.parts.allSatisfy { $0.reason == .invalidPayload })
        #expect(translation.parts.first?.detail == "unified_receipt.latest_receipt_info[0].product_id of transaction 2001 is missing")
        #expect(translation.parts.last.map { String(decoding: $0.raw, as: UTF8.self) } == "\"garbage\"")
        #expect(!translation.facts.of(AppleFactKind.renewalStatus).isEmpty)
    }

    /// A notification whose own statement is unreadable still gives its receipt; one with nothing readable at all
    /// is quarantined whole.
    @Test func theNotificationsStatementIsAUnitToo() throws {
        let json = Self.v1(latest: "[\(Self.entry2001)]").replacingOccurrences(of: #""auto_renew_status": "false""#,
                                                                              with: #""auto_renew_status": "maybe""#)
        let translation = translator.translate(try record(.appleNotificationV1, json: json, envelope: Envelope(receivedAt: Self.received)))
        #expect(translation.parts.map(\.path) == ["auto_renew_status"])
        #expect(translation.facts.of(AppleFactKind.period).map(\.ref) == ["2001"])
        let nothing = Self.v1(latest: "[\"garbage\"]", pending: "[]").replacingOccurrences(of: #""auto_renew_status": "false""#,
                                                                                         with: #""auto_renew_status": "maybe""#)
        #expect(translator.translate(try record(.appleNotificationV1, json: nothing)).quarantineReason == .invalidPayload)
    }

    @Test func verifyReceiptWithEmptyAndMistypedLists() throws {
        let json = """
        {"status": 0, "environment": "Production", "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app",
          "request_date_ms": "1709800000000", "in_app": {}},
         "latest_receipt_info": [\(Self.entry2001), \(Self.entry2000)], "pending_renewal_info": null,
         "latest_receipt": "MIIT..."}
        """
        let translation = translator.translate(try record(.appleVerifyReceipt, json: json))
        #expect(translation.parts.isEmpty)
        #expect(translation.facts.of(AppleFactKind.period).map(\.ref) == ["2000", "2001"])
        let mistyped = json.replacingOccurrences(of: #""pending_renewal_info": null"#, with: #""pending_renewal_info": "n/a""#)
        let partly = translator.translate(try record(.appleVerifyReceipt, json: mistyped))
        #expect(partly.parts.map(\.path) == ["pending_renewal_info"])
        #expect(partly.parts.first?.detail == "pending_renewal_info is a JSON string, not an array")
        #expect(partly.facts.of(AppleFactKind.period).count == 2)
    }

    /// Issue 13, class 2, for Apple: a receipt without envelope and without `request_date` is observed at the
    /// latest thing it proves happened (a purchase), never at an expiry ahead of it; every transaction keeps its
    /// own purchase date, so nothing is dated at the first start.
    @Test func aBareReceiptIsDatedByItsOwnTransactions() throws {
        let json = """
        {"status": 0, "environment": "Production", "receipt": {"receipt_type": "Production", "in_app": []},
         "latest_receipt_info": [\(Self.entry2001), \(Self.entry2000)],
         "pending_renewal_info": [{"original_transaction_id": "2000", "auto_renew_status": "1", "auto_renew_product_id": "premium_weekly"}]}
        """
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        #expect(facts.allSatisfy { $0.observedAt == 1_709_445_600_000 })
        #expect(facts.of(AppleFactKind.period).map(\.at) == [1_708_840_800_000, 1_709_445_600_000])
        let history = AppleHistoryBuilder().history(id: "2000", facts: facts)
        #expect(history.periods.map(\.start) == [1_708_840_800_000, 1_709_445_600_000])
        #expect(history.periods.map(\.end) == [1_709_445_600_000, 1_710_050_400_000])
    }

    /// Issue 18: a 390-byte V1 notification with a purchase date in the year 5,441,567 was used, and `report` then
    /// built a month row up to it until the OOM killer came. Stopped at ingest, naming the field.
    @Test func aPurchaseDateInTheYear5441567IsImplausible() throws {
        let json = #"{"notification_type":"INITIAL_BUY","environment":"PROD","unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[{"product_id":"premium_monthly","transaction_id":"9001","original_transaction_id":"9001","purchase_date_ms":"171657106502400000","expires_date_ms":"171657109094400000","is_trial_period":"false"}],"pending_renewal_info":[]}}"#
        let translation = translator.translate(try record(.appleNotificationV1, json: json))
        guard case .quarantined(.implausibleTimestamp, let detail) = translation else {
            Issue.record("not quarantined as implausible: \(translation)")
            return
        }
        #expect(detail.hasPrefix("unified_receipt.latest_receipt_info[0].purchase_date_ms is 171657106502400000 ms"))
        #expect(detail.contains("5441567-03-01"))
        // Beside a good transaction, the bad one is the part set aside.
        let mixed = json.replacingOccurrences(of: #""latest_receipt_info":["#, with: #""latest_receipt_info":[\#(Self.entry2000),"#)
        let partly = translator.translate(try record(.appleNotificationV1, json: mixed))
        #expect(partly.facts.of(AppleFactKind.period).map(\.ref) == ["2000"])
        #expect(partly.parts.map(\.reason) == [.implausibleTimestamp])
    }

    @Test func anImplausibleRequestDateQuarantinesTheWholeReceipt() throws {
        let json = """
        {"status": 0, "environment": "Production", "receipt": {"request_date_ms": "-9223372036854775808", "in_app": []},
         "latest_receipt_info": [\(Self.entry2000)]}
        """
        let translation = translator.translate(try record(.appleVerifyReceipt, json: json))
        #expect(translation.quarantineReason == .implausibleTimestamp)
    }
}

/// The same rules for signed payloads (V2 notifications), with a generated Apple-shaped chain.
@Suite struct WildSignedPayloadTests {
    let chain: TestChain
    let translator: AppStoreTranslator

    init() throws {
        chain = try TestChain()
        translator = try AppStoreTranslator(trustedRoots: [chain.rootDER], bundleIds: [], times: testTimes)
    }

    func notification(_ type: String, data: String?) throws -> Translation {
        let body = data.map { #","data":\#($0)"# } ?? ""
        let payload = #"{"notificationType":"\#(type)","notificationUUID":"3b2e14d5-51f5-4503-b5a8-c3a1af68eb21","version":"2.0","signedDate":\#(NotificationV2Tests.signedDate)\#(body)}"#
        return translator.translate(record(.appleNotificationV2, jws: try chain.sign(payload)))
    }

    @Test(arguments: ["{}", "null", "[]", nil] as [String?])
    func anEmptyDataIsNothingToRead(_ data: String?) throws {
        let translation = try notification("DID_RENEW", data: data)
        #expect(translation == .used([]))
    }

    /// An unreadable `signedTransactionInfo` is set aside; the renewal info beside it is still used.
    @Test func aBadTransactionBesideAGoodRenewalInfo() throws {
        let renewal = try chain.sign(NotificationV2Tests.renewal(extra: #","expirationIntent":1"#, autoRenew: 0))
        let translation = try notification("EXPIRED", data: #"{"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"not-a-jws","signedRenewalInfo":"\#(renewal)"}"#)
        #expect(translation.parts.map(\.path) == ["data.signedTransactionInfo"])
        #expect(translation.facts.of(AppleFactKind.renewalStatus).map(\.flags) == [[]])
        #expect(translation.facts.of(AppleFactKind.expiry).map(\.detail) == ["voluntary", "other"])
    }

    /// Every JWS is verified before use, the nested ones too: inside a notification Apple signed, a transaction
    /// signed under another root, or whose signature was altered, is its part's quarantine (`bad_signature`) and
    /// states nothing; the renewal info beside it is used.
    @Test func aNestedTransactionWithABadSignatureIsQuarantined() throws {
        let renewal = try chain.sign(NotificationV2Tests.renewal())
        let foreign = try TestChain().sign(NotificationV2Tests.transaction())
        var altered = try chain.sign(NotificationV2Tests.transaction())
        altered.replaceSubrange(altered.index(altered.endIndex, offsetBy: -6)..., with: "AAAAAA")
        for transaction in [foreign, altered] {
            let translation = try notification("DID_RENEW", data: #"{"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"}"#)
            #expect(translation.parts.map(\.path) == ["data.signedTransactionInfo"])
            #expect(translation.parts.map(\.reason) == [.badSignature])
            #expect(translation.facts.of(AppleFactKind.period).isEmpty)
            #expect(!translation.facts.of(AppleFactKind.renewalStatus).isEmpty)
        }
    }

    @Test func anImplausibleExpiryIsAPart() throws {
        let transaction = try chain.sign(NotificationV2Tests.transaction(expires: 9_223_372_036_854_775_807))
        let renewal = try chain.sign(NotificationV2Tests.renewal())
        let translation = try notification("DID_RENEW", data: #"{"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"}"#)
        #expect(translation.parts.map(\.reason) == [.implausibleTimestamp])
        #expect(translation.parts.first?.detail.hasPrefix("data.signedTransactionInfo.expiresDate is 9223372036854775807 ms") == true)
        #expect(translation.facts.of(AppleFactKind.period).isEmpty)
        #expect(!translation.facts.of(AppleFactKind.renewalStatus).isEmpty)
    }
}
