import AppStore
import Facts
import Ingest
import Testing

/// App Store Server API responses (Get Transaction History, Get All Subscription Statuses), signed with the
/// same generated chain as the V2 notifications they are held to: the same JWS must give the same facts.
extension NotificationV2Tests {
    /// A `HistoryResponse` page holding `transactions` (signed here).
    func history(_ transactions: [String], environment: String = "Production", bundle: String = "com.example.app",
                 hasMore: Bool = false) throws -> String {
        let signed = try transactions.map { #""\#(try chain.sign($0))""# }.joined(separator: ",")
        return """
        {"revision":"1709300000000_5002","bundleId":"\(bundle)","appAppleId":1234567890,"environment":"\(environment)",\
        "hasMore":\(hasMore),"signedTransactions":[\(signed)]}
        """
    }

    /// A `StatusResponse` with one subscription group whose last transaction is `transaction` and `renewal`.
    func statuses(transaction: String, renewal: String, status: Int = 1, environment: String = "Production") throws -> String {
        """
        {"environment":"\(environment)","bundleId":"com.example.app","appAppleId":1234567890,"data":[\
        {"subscriptionGroupIdentifier":"21000000","lastTransactions":[{"originalTransactionId":"5000","status":\(status),\
        "signedTransactionInfo":"\(try chain.sign(transaction))","signedRenewalInfo":"\(try chain.sign(renewal))"}]}]}
        """
    }

    func translate(_ source: SourceKind, _ json: String) throws -> Translation {
        translator.translate(try record(source, json: json))
    }

    @Test func historyGivesTheFactsOfTheSameTransactionsInNotifications() throws {
        let first = Self.transaction(id: "5001", expires: Self.purchase)
            .replacingOccurrences(of: #""purchaseDate":\#(Self.purchase)"#, with: #""purchaseDate":\#(Self.purchase - 29 * 86_400_000)"#)
        let second = Self.transaction(id: "5002")
        let fromHistory = try translate(.appleTransactionHistory, try history([first, second], hasMore: true))
        let fromNotifications = try notification("SUBSCRIBED", transaction: first, renewal: nil).facts
            + notification("DID_RENEW", transaction: second, renewal: nil).facts
        #expect(fromHistory.facts.count == 4)
        #expect(Set(fromHistory.facts) == Set(fromNotifications))
        #expect(fromHistory.facts.of(AppleFactKind.period).map(\.ref) == ["5001", "5002"])
        #expect(fromHistory.facts.allSatisfy { $0.observedAt == Self.signedDate })
    }

    /// A Get Notification History page (a backfill of missed notifications): each `signedPayload` gives what the
    /// same notification archived alone gives; a forged one is a part, a sandbox one states nothing, and a page of
    /// sandbox notifications alone is excluded.
    @Test func aNotificationHistoryPageGivesTheFactsOfItsNotifications() throws {
        let renewed = try signedNotification("DID_RENEW", uuid: "7b5d0a4e-0000-4000-8000-000000000001")
        let changed = try signedNotification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
                                             uuid: "7b5d0a4e-0000-4000-8000-000000000002",
                                             renewal: Self.renewal(autoRenew: 0))
        let sandbox = try signedNotification("DID_RENEW", uuid: "7b5d0a4e-0000-4000-8000-000000000003", environment: "Sandbox")
        let forged = try TestChain().sign(#"{"notificationType":"DID_RENEW","signedDate":1709300000000}"#)
        let parsed = try record(.appleNotificationV2, json: Self.page([renewed, changed, sandbox, forged]))
        let translated = translator.translate(parsed)
        let alone = try notification("DID_RENEW").facts
            + notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", renewal: Self.renewal(autoRenew: 0)).facts
        #expect(Set(translated.facts) == Set(alone))
        #expect(translated.parts.map(\.path) == ["notificationHistory[3]"])
        #expect(translated.parts.map(\.reason) == [.badSignature])
        #expect(translator.translate(try record(.appleNotificationV2, json: Self.page([sandbox]))) == .excluded(.sandbox))
    }

    /// A Get Notification History page of these signed notifications.
    static func page(_ payloads: [String]) -> String {
        let items = payloads.map { #"{"signedPayload":"\#($0)","sendAttempts":[{"attemptDate":1709300000000,"sendAttemptResult":"SUCCESS"}]}"# }
        return #"{"notificationHistory":[\#(items.joined(separator: ","))],"hasMore":false,"paginationToken":"57a3a1c6"}"#
    }

    /// A notification of the page none of whose units can be read (its only transaction expires before its
    /// purchase) is quarantined alone; it is a part of the page, never dropped unsaid.
    @Test func aNotificationHistoryItemWithNothingUsableIsAPart() throws {
        let renewed = try signedNotification("DID_RENEW", uuid: "7b5d0a4e-0000-4000-8000-000000000001")
        let broken = try signedNotification("REFUND", uuid: "7b5d0a4e-0000-4000-8000-000000000004",
                                            transaction: Self.transaction(id: "5009", expires: Self.purchase - 86_400_000),
                                            renewal: nil)
        let alone = translator.translate(try record(.appleNotificationV2, json: #"{"signedPayload":"\#(broken)"}"#))
        #expect(alone.quarantineReason != nil)
        let translated = translator.translate(try record(.appleNotificationV2, json: Self.page([renewed, broken])))
        #expect(translated.facts == (try notification("DID_RENEW").facts))
        #expect(translated.parts.map(\.path) == ["notificationHistory[1]"])
        #expect(translated.parts.map(\.reason) == [alone.quarantineReason])
    }

    @Test func statusesGiveTheFactsOfTheSameTransactionAndRenewalInANotification() throws {
        let renewal = Self.renewal(extra: #","isInBillingRetryPeriod":true,"gracePeriodExpiresDate":1710500000000"#)
        let fromStatuses = try translate(.appleSubscriptionStatuses,
                                         try statuses(transaction: Self.transaction(), renewal: renewal, status: 4))
        let fromNotification = try notification("DID_CHANGE_RENEWAL_PREF", transaction: Self.transaction(), renewal: renewal).facts
        #expect(Set(fromStatuses.facts) == Set(fromNotification))
        let issue = try #require(fromStatuses.facts.of(AppleFactKind.billingIssue).first)
        #expect(issue.at == Self.expires && issue.end == 1_710_500_000_000)
        #expect(fromStatuses.facts.of(AppleFactKind.renewalStatus).map(\.flags) == [.on])
    }

    @Test func aForgedTransactionIsQuarantinedAsAPartAndTheOthersAreUsed() throws {
        let genuine = try chain.sign(Self.transaction(id: "5001"))
        let forged = try TestChain().sign(Self.transaction(id: "5002"))
        let page = #"{"revision":"r","bundleId":"com.example.app","environment":"Production","hasMore":false,"signedTransactions":["\#(genuine)","\#(forged)",42]}"#
        let translation = try translate(.appleTransactionHistory, page)
        #expect(translation.facts.of(AppleFactKind.period).map(\.ref) == ["5001"])
        #expect(translation.parts.map(\.path) == ["signedTransactions[1]", "signedTransactions[2]"])
        #expect(translation.parts.map(\.reason) == [.badSignature, .invalidPayload])
        let allForged = #"{"signedTransactions":["\#(forged)"],"environment":"Production"}"#
        #expect(try translate(.appleTransactionHistory, allForged).quarantineReason == .badSignature)
    }

    @Test func sandboxWrongBundleFamilySharedAndEmptyResponses() throws {
        let sandbox = try translate(.appleTransactionHistory, try history([Self.transaction()], environment: "Sandbox"))
        guard case .excluded(.sandbox, _) = sandbox else { Issue.record("\(sandbox)"); return }
        let xcode = try translate(.appleSubscriptionStatuses,
                                  try statuses(transaction: Self.transaction(), renewal: Self.renewal(), environment: "Xcode"))
        guard case .excluded(.sandbox, _) = xcode else { Issue.record("\(xcode)"); return }
        #expect(try translate(.appleTransactionHistory, try history([Self.transaction()], bundle: "com.other.app"))
            .quarantineReason == .wrongBundle)
        let shared = Self.transaction().replacingOccurrences(of: "PURCHASED", with: "FAMILY_SHARED")
        guard case .excluded(.familyShared, _) = try translate(.appleTransactionHistory, try history([shared])) else {
            Issue.record("a page of family-shared transactions is excluded"); return
        }
        // The last page of a history may be empty; `data` of no group is a response too.
        #expect(try translate(.appleTransactionHistory, try history([])) == .used([]))
        #expect(try translate(.appleSubscriptionStatuses, #"{"environment":"Production","bundleId":"com.example.app","data":[]}"#) == .used([]))
        // `data` sent as {} or null, a status item with its renewal info missing: read what is there.
        let lenient = #"{"environment":"Production","bundleId":"com.example.app","data":[{"lastTransactions":[{"signedTransactionInfo":"\#(try chain.sign(Self.transaction()))","signedRenewalInfo":null}]},{"lastTransactions":{}}]}"#
        #expect(try translate(.appleSubscriptionStatuses, lenient).facts.of(AppleFactKind.period).map(\.ref) == ["5002"])
    }
}
