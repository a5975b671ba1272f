import AppStore
import Facts
import Ingest
import Testing

/// App Store Server Notifications V1, as Apple posted them (strings for numbers and booleans, PROD/Sandbox).
@Suite struct NotificationV1Tests {
    let translator: AppStoreTranslator

    init() throws {
        translator = try AppStoreTranslator(trustedRoots: AppStoreTranslator.appleRootCAG3, bundleIds: [], times: testTimes)
    }

    static func notification(type: String, extra: String = "", environment: String = "PROD",
                             pending: String = #"{"original_transaction_id": "2000", "auto_renew_product_id": "premium_weekly", "auto_renew_status": "1"}"#) -> String {
        """
        {"notification_type": "\(type)", "environment": "\(environment)", "password": "shared-secret", "bid": "com.example.app",
         "bvrs": "42", "auto_renew_product_id": "premium_weekly", "original_transaction_id": 2000\(extra),
         "unified_receipt": {"status": 0, "environment": "Production", "latest_receipt": "MIIT...",
           "latest_receipt_info": [
             {"product_id": "premium_weekly", "transaction_id": "2001", "original_transaction_id": "2000",
              "purchase_date_ms": "1709445600000", "expires_date_ms": "1710136800000", "is_trial_period": "false",
              "subscription_group_identifier": "20500000", "in_app_ownership_type": "PURCHASED"},
             {"product_id": "premium_weekly", "transaction_id": "2000", "original_transaction_id": "2000",
              "purchase_date_ms": "1708927200000", "expires_date_ms": "1709532000000", "is_trial_period": "false",
              "in_app_ownership_type": "PURCHASED"}],
           "pending_renewal_info": [\(pending)]}}
        """
    }

    @Test func renewalStatusChangeUsesItsChangeDate() throws {
        let json = Self.notification(type: "DID_CHANGE_RENEWAL_STATUS",
                                     extra: #", "auto_renew_status": "false", "auto_renew_status_change_date_ms": "1709800000000""#,
                                     pending: #"{"original_transaction_id": "2000", "auto_renew_status": "0"}"#)
        let facts = translator.translate(try record(.appleNotificationV1, json: json,
                                                    envelope: Envelope(receivedAt: 1_709_800_002_000))).facts
        let status = facts.of(AppleFactKind.renewalStatus)
        #expect(status.contains { $0.at == 1_709_800_000_000 && $0.flags == [] && $0.subject == "2000" })
        #expect(facts.allSatisfy { $0.observedAt == 1_709_800_002_000 })
        #expect(facts.of(AppleFactKind.period).count == 2)
    }

    /// Apple retries a V1 notification for up to three days: a DID_RENEW received three days after the renewal
    /// (purchased 03-03 06:00) states the auto-renew state of that time, so a change dated in between (turned off on
    /// 03-05) is the last word at the period's end, a voluntary churn.
    @Test func aLateDeliveredNoticeStatesTheAutoRenewStateOfItsEvent() throws {
        let renewed = translator.translate(try record(.appleNotificationV1, json: Self.notification(type: "DID_RENEW"),
                                                      envelope: Envelope(receivedAt: 1_709_704_800_000))).facts
        #expect(renewed.of(AppleFactKind.renewalStatus).map(\.at) == [1_709_445_600_000])
        let turnedOff = translator.translate(try record(.appleNotificationV1, json: Self.notification(
            type: "DID_CHANGE_RENEWAL_STATUS",
            extra: #", "auto_renew_status": "false", "auto_renew_status_change_date_ms": "1709632800000""#,
            pending: #"{"original_transaction_id": "2000", "auto_renew_status": "0"}"#),
            envelope: Envelope(receivedAt: 1_709_632_801_000))).facts
        let history = AppleHistoryBuilder().history(id: "2000", facts: renewed + turnedOff)
        #expect(history.periods.last?.endReason == .voluntary)
        // A notice about a subscription that had lapsed when it came states the state after the lapse, at its receipt.
        let lapsed = translator.translate(try record(.appleNotificationV1, json: Self.notification(
            type: "CONSUMPTION_REQUEST",
            pending: #"{"original_transaction_id": "2000", "auto_renew_status": "0", "expiration_intent": "3"}"#),
            envelope: Envelope(receivedAt: 1_711_000_000_000))).facts
        #expect(lapsed.of(AppleFactKind.renewalStatus).map(\.at) == [1_711_000_000_000])
    }

    @Test func failureWithoutExpiryNoticeIsLostAfterSixtyDays() throws {
        let json = Self.notification(type: "DID_FAIL_TO_RENEW",
                                     pending: #"{"original_transaction_id": "2000", "auto_renew_status": "1", "is_in_billing_retry_period": "1", "expiration_intent": "2"}"#)
        let facts = translator.translate(try record(.appleNotificationV1, json: json,
                                                    envelope: Envelope(receivedAt: 1_710_137_000_000))).facts
        let issues = facts.of(AppleFactKind.billingIssue)
        #expect(!issues.isEmpty && issues.allSatisfy { $0.at == 1_710_136_800_000 && $0.end == nil })
        let history = AppleHistoryBuilder().history(id: "2000", facts: facts)
        let e: Millis = 1_710_136_800_000
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: e, outcome: .lost(at: e + 60 * 86_400_000))])
        #expect(history.periods.last?.endReason == .billingIssue)
    }

    /// Apple's V1 body names no `original_transaction_id`; its receipt lists every subscription of the user,
    /// newest first. The one that failed is the one in billing retry renewing `auto_renew_product_id`.
    @Test func failureNoticeFindsItsSubscriptionAmongSeveral() throws {
        let json = #"""
        {"notification_type": "DID_FAIL_TO_RENEW", "environment": "PROD", "auto_renew_product_id": "m1",
         "unified_receipt": {"status": 0, "environment": "Production",
           "latest_receipt_info": [
             {"product_id": "remove_ads", "transaction_id": "14000", "original_transaction_id": "14000", "purchase_date_ms": "1706000000000"},
             {"product_id": "pro", "transaction_id": "13501", "original_transaction_id": "13501",
              "purchase_date_ms": "1705708800000", "expires_date_ms": "1708387200000"},
             {"product_id": "m1", "transaction_id": "13001", "original_transaction_id": "13001",
              "purchase_date_ms": "1704412800000", "expires_date_ms": "1707091200000"}],
           "pending_renewal_info": [
             {"original_transaction_id": "13501", "auto_renew_product_id": "pro", "auto_renew_status": "1"},
             {"original_transaction_id": "13001", "auto_renew_product_id": "m1", "auto_renew_status": "1",
              "is_in_billing_retry_period": "1", "expiration_intent": "2"}]}}
        """#
        let facts = translator.translate(try record(.appleNotificationV1, json: json,
                                                    envelope: Envelope(receivedAt: 1_707_091_500_000))).facts
        // Stated by the notification and by the renewal info: one episode of the m1 subscription.
        #expect(Set(facts.of(AppleFactKind.billingIssue).map(\.subject)) == ["13001"])
        #expect(Set(facts.of(AppleFactKind.billingIssue).map(\.at)) == [1_707_091_200_000])
    }

    /// A family member's receipt: the shared subscription's renewal info is no more theirs than its entries.
    @Test func aFamilySharedSubscriptionsRenewalInfoIsLeftOut() throws {
        let json = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"receipt_type": "Production", "bundle_id": "com.example.app", "request_date_ms": "1676000000000", "in_app": []},
         "latest_receipt_info": [
           {"product_id": "m1", "transaction_id": "5002", "original_transaction_id": "5001", "purchase_date_ms": "1672531200000",
            "expires_date_ms": "1675209600000", "in_app_ownership_type": "FAMILY_SHARED"},
           {"product_id": "coins", "transaction_id": "6001", "original_transaction_id": "6001", "purchase_date_ms": "1673000000000",
            "in_app_ownership_type": "PURCHASED"}],
         "pending_renewal_info": [{"original_transaction_id": "5001", "auto_renew_product_id": "m1", "auto_renew_status": "1",
                                   "is_in_billing_retry_period": "1", "expiration_intent": "2",
                                   "grace_period_expires_date_ms": "1675814400000"}]}
        """#
        let facts = translator.translate(try record(.appleVerifyReceipt, json: json)).facts
        #expect(!facts.isEmpty)
        #expect(facts.allSatisfy { $0.subject == "6001" })
    }

    @Test func refundRevokesTheCancelledTransaction() throws {
        let json = #"""
        {"notification_type": "REFUND", "environment": "PROD", "original_transaction_id": "3000",
         "unified_receipt": {"status": 0, "environment": "Production", "latest_receipt_info": [
           {"product_id": "premium_monthly", "transaction_id": "3001", "original_transaction_id": "3000",
            "purchase_date_ms": "1709445600000", "expires_date_ms": "1712124000000",
            "cancellation_date_ms": "1709900000000", "cancellation_reason": "0"}], "pending_renewal_info": []}}
        """#
        let facts = translator.translate(try record(.appleNotificationV1, json: json)).facts
        #expect(facts.of(AppleFactKind.revocation).map(\.ref) == ["3001"])
        // No received_at: the statement time is the latest thing the payload says happened (the refund), never
        // the expiry, which lies after it.
        #expect(facts.allSatisfy { $0.observedAt == 1_709_900_000_000 })
    }

    /// A V1 REFUND's receipt lists the app's latest 100 transactions only (Apple, forum thread 745367): when the
    /// refunded one is not among them, nothing says which charge was refunded nor when. The receipt is still
    /// used; the notification's own statement is a quarantined part that says the refund is not counted.
    @Test(arguments: ["REFUND", "CANCEL"])
    func aRefundWhoseReceiptLacksTheRefundedTransactionIsSaid(_ type: String) throws {
        let translated = translator.translate(try record(.appleNotificationV1, json: Self.notification(type: type)))
        #expect(translated.quarantineReason == nil)
        #expect(translated.facts.of(AppleFactKind.period).map(\.ref) == ["2000", "2001"])
        #expect(translated.facts.of(AppleFactKind.revocation).isEmpty)
        #expect(translated.parts.map(\.path) == ["notification_type"])
        #expect(translated.parts.first?.detail.contains("no refunded transaction") == true, "\(translated.parts)")
        // A receipt showing another subscription's refund does not name this one's.
        let other = Self.notification(type: type).replacingOccurrences(
            of: #""transaction_id": "2000", "original_transaction_id": "2000","#,
            with: #""transaction_id": "2000", "original_transaction_id": "2000", "cancellation_date_ms": "1709450000000","#)
        #expect(translator.translate(try record(.appleNotificationV1, json: other)).parts.isEmpty)
        let elsewhere = other.replacingOccurrences(of: #""original_transaction_id": 2000"#, with: #""original_transaction_id": 4000"#)
        #expect(translator.translate(try record(.appleNotificationV1, json: elsewhere)).parts.map(\.path) == ["notification_type"])
        // A refund logged some days late is still this one; one more than 30 days before the notice is an older one.
        let late = Envelope(receivedAt: 1_709_450_000_000 + 5 * 86_400_000)
        #expect(translator.translate(try record(.appleNotificationV1, json: other, envelope: late)).parts.isEmpty)
        let older = Envelope(receivedAt: 1_709_450_000_000 + 31 * 86_400_000)
        #expect(translator.translate(try record(.appleNotificationV1, json: other, envelope: older)).parts.map(\.path) == ["notification_type"])
        // An upgrade's cancellation explains a CANCEL (Apple sent one for upgrades before April 2021), never a
        // REFUND.
        let upgraded = other.replacingOccurrences(of: #""cancellation_date_ms": "1709450000000","#,
                                                  with: #""cancellation_date_ms": "1709450000000", "is_upgraded": "true","#)
        #expect(translator.translate(try record(.appleNotificationV1, json: upgraded)).parts.map(\.path)
                == (type == "CANCEL" ? [] : ["notification_type"]))
    }

    /// DID_RECOVER (and RENEWAL, its name before 2021): "successful automatic renewal of an expired subscription
    /// that failed to renew in the past". Without the DID_FAIL_TO_RENEW in the archive, it alone opens the episode
    /// at the end of the period before the recovered one, recovered at the recovered transaction's purchase.
    @Test(arguments: ["DID_RECOVER", "RENEWAL"])
    func aRecoveryAloneStatesItsBillingIssue(_ type: String) throws {
        let e: Millis = 1_709_532_000_000, recoveredAt: Millis = 1_709_704_800_000
        let json = Self.notification(type: type)
            .replacingOccurrences(of: #""purchase_date_ms": "1709445600000", "expires_date_ms": "1710136800000""#,
                                  with: #""purchase_date_ms": "\#(recoveredAt)", "expires_date_ms": "1710309600000""#)
        let facts = translator.translate(try record(.appleNotificationV1, json: json, envelope: Envelope(receivedAt: recoveredAt + 5_000))).facts
        #expect(facts.of(AppleFactKind.billingIssue).map(\.at) == [recoveredAt])
        let history = AppleHistoryBuilder().history(id: "2000", facts: facts)
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: e, outcome: .recovered(at: recoveredAt))])
        // An interactive renewal (the user resubscribed) states no billing issue.
        let interactive = translator.translate(try record(.appleNotificationV1, json: Self.notification(type: "INTERACTIVE_RENEWAL"))).facts
        #expect(interactive.of(AppleFactKind.billingIssue).isEmpty)
    }

    @Test func unknownTypesStillUseTheReceipt() throws {
        let facts = translator.translate(try record(.appleNotificationV1, json: Self.notification(type: "SOMETHING_NEW"))).facts
        #expect(facts.of(AppleFactKind.period).map(\.ref) == ["2000", "2001"])
    }

    @Test func pre2020NotificationWithTopLevelReceiptInfo() throws {
        let json = #"""
        {"notification_type": "DID_CHANGE_RENEWAL_STATUS", "environment": "PROD", "auto_renew_status": "false",
         "auto_renew_status_change_date_ms": "1546400000000", "auto_renew_product_id": "premium_monthly",
         "latest_expired_receipt_info": {"original_transaction_id": "4000", "transaction_id": "4001",
           "product_id": "premium_monthly", "purchase_date_ms": "1543800000000", "expires_date": "1546478400000",
           "is_trial_period": "false"}}
        """#
        let facts = translator.translate(try record(.appleNotificationV1, json: json)).facts
        #expect(facts.of(AppleFactKind.period).map(\.end) == [1_546_478_400_000])
        #expect(facts.of(AppleFactKind.renewalStatus).map(\.subject) == ["4000"])
        #expect(facts.of(AppleFactKind.renewalStatus).first?.at == 1_546_400_000_000)
    }

    @Test func sandboxIsExcluded() throws {
        let json = Self.notification(type: "INITIAL_BUY", environment: "Sandbox")
        #expect(translator.translate(try record(.appleNotificationV1, json: json)) == .excluded(.sandbox))
    }

    @Test func missingTypeIsInvalid() throws {
        let json = #"{"environment": "PROD", "unified_receipt": {"status": 0}}"#
        #expect(translator.translate(try record(.appleNotificationV1, json: json)).quarantineReason == .invalidPayload)
    }
}
