/// What the App Store would have sent about one subscription at a given instant: verifyReceipt responses,
/// App Store Server Notifications V1 and V2 (signed), with the fields, spellings and quirks Apple uses.
struct ApplePayloads {
    let catalog: Catalog
    let subscription: SimulatedSubscription
    let chain: AppleSigningChain
    /// Numeric quirks drawn per subscriber: some responses write `quantity` as a number, some put
    /// `cancellation_date: "0"` on live transactions.
    let numericQuantity: Bool
    let zeroCancellationDate: Bool

    private var timeline: TimelineSubscription { subscription.timeline }
    private var originalId: String { timeline.id }

    /// The expiry Apple shows for a period: an upgraded transaction keeps its original expiry (the
    /// `cancellation_date` with `is_upgraded` says when it really ended).
    private func shownExpiry(_ period: TimelinePeriod) -> Int64 {
        period.scheduledEnd ?? period.end
    }

    private func webOrderLineItemId(_ period: TimelinePeriod) -> String {
        String((Int64(period.transactionId) ?? 0) - 1_000_000_000_000_000 + 100_000_000_000)
    }

    // MARK: verifyReceipt

    /// One `latest_receipt_info` / `in_app` entry as known at `at`.
    private func receiptEntry(_ period: TimelinePeriod, at: Int64) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("quantity", numericQuantity ? .int(1) : .string("1")),
            ("product_id", .string(period.product)),
            ("transaction_id", .string(period.transactionId)),
            ("original_transaction_id", .string(originalId)),
            ("purchase_date", .string(UTCCalendar.appleDate(period.start))),
            ("purchase_date_ms", .string(String(period.start))),
            ("purchase_date_pst", .string(UTCCalendar.applePSTDate(period.start))),
            ("original_purchase_date", .string(UTCCalendar.appleDate(timeline.periods[0].start))),
            ("original_purchase_date_ms", .string(String(timeline.periods[0].start))),
            ("expires_date", .string(UTCCalendar.appleDate(shownExpiry(period)))),
            ("expires_date_ms", .string(String(shownExpiry(period)))),
            ("expires_date_pst", .string(UTCCalendar.applePSTDate(shownExpiry(period)))),
            ("web_order_line_item_id", .string(webOrderLineItemId(period))),
            ("is_trial_period", .string(period.trial ? "true" : "false")),
            ("is_in_intro_offer_period", .string(period.introductory ? "true" : "false")),
            ("in_app_ownership_type", .string("PURCHASED")),
            ("subscription_group_identifier", .string("21000001")),
        ]
        if let r = period.revokedAt, r <= at {
            members.append(("cancellation_date", .string(UTCCalendar.appleDate(r))))
            members.append(("cancellation_date_ms", .string(String(r))))
            members.append(("cancellation_date_pst", .string(UTCCalendar.applePSTDate(r))))
            members.append(("cancellation_reason", .string("0")))
        } else if period.endReason == .replaced, period.end <= at {
            members.append(("cancellation_date", .string(UTCCalendar.appleDate(period.end))))
            members.append(("cancellation_date_ms", .string(String(period.end))))
            members.append(("cancellation_date_pst", .string(UTCCalendar.applePSTDate(period.end))))
            members.append(("cancellation_reason", .string("0")))
            members.append(("is_upgraded", .string("true")))
        } else if zeroCancellationDate {
            members.append(("cancellation_date", .string("0")))
        }
        return .object(members)
    }

    /// A consumable entry: no `expires_date*`, no `web_order_line_item_id`.
    private func consumableEntry(_ purchase: TimelineOneTimePurchase, index: Int) -> JSONValue {
        .object([
            ("quantity", .string(String(purchase.quantity))),
            ("product_id", .string(purchase.product)),
            ("transaction_id", .string(String((Int64(originalId) ?? 0) + 500 + Int64(index)))),
            ("original_transaction_id", .string(String((Int64(originalId) ?? 0) + 500 + Int64(index)))),
            ("purchase_date", .string(UTCCalendar.appleDate(purchase.at))),
            ("purchase_date_ms", .string(String(purchase.at))),
            ("purchase_date_pst", .string(UTCCalendar.applePSTDate(purchase.at))),
            ("original_purchase_date", .string(UTCCalendar.appleDate(purchase.at))),
            ("original_purchase_date_ms", .string(String(purchase.at))),
            ("is_trial_period", .string("false")),
            ("in_app_ownership_type", .string("PURCHASED")),
        ])
    }

    /// The transactions known at `at`, newest first as Apple sorts `latest_receipt_info`, consumables mixed in
    /// by purchase date.
    private func latestReceiptInfo(at: Int64) -> [JSONValue] {
        var entries: [(Int64, String, JSONValue)] = timeline.periods.filter { $0.start <= at }
            .map { ($0.start, $0.transactionId, receiptEntry($0, at: at)) }
        for (index, purchase) in timeline.oneTimePurchases.enumerated() where purchase.at <= at {
            entries.append((purchase.at, "c\(index)", consumableEntry(purchase, index: index)))
        }
        return entries.sorted { ($0.0, $0.1) > ($1.0, $1.1) }.map(\.2)
    }

    /// The latest period started at or before `at`.
    func currentPeriod(at: Int64) -> TimelinePeriod? { timeline.periods.last { $0.start <= at } }

    private func autoRenew(at: Int64) -> Bool { subscription.autoRenewChanges.last { $0.at <= at }?.on ?? true }

    /// The billing-issue episode in progress at `at`, if any.
    private func openEpisode(at: Int64) -> TimelineEpisode? {
        timeline.episodes.last { e in
            guard e.start <= at else { return false }
            switch e.outcome {
            case .recovered(let t): return at < t
            case .lost(let l): return at < l
            }
        }
    }

    private func lostEpisode(at: Int64) -> Bool {
        guard let last = timeline.episodes.last, last.start <= at, case .lost(let l) = last.outcome else { return false }
        return l <= at && (currentPeriod(at: at)?.start ?? 0) < last.start
    }

    /// `pending_renewal_info[0]` at `at`.
    private func pendingRenewalInfo(at: Int64) -> JSONValue {
        guard let period = currentPeriod(at: at) else { return .object([]) }
        var members: [(String, JSONValue)] = [
            ("auto_renew_product_id", .string(period.product)),
            ("product_id", .string(period.product)),
            ("original_transaction_id", .string(originalId)),
            ("auto_renew_status", .string(autoRenew(at: at) ? "1" : "0")),
        ]
        if let episode = openEpisode(at: at) {
            members.append(("expiration_intent", .string("2")))
            members.append(("is_in_billing_retry_period", .string("1")))
            if episode.graceEnd > episode.start {
                members.append(("grace_period_expires_date", .string(UTCCalendar.appleDate(episode.graceEnd))))
                members.append(("grace_period_expires_date_ms", .string(String(episode.graceEnd))))
                members.append(("grace_period_expires_date_pst", .string(UTCCalendar.applePSTDate(episode.graceEnd))))
            }
        } else if lostEpisode(at: at) {
            members.append(("expiration_intent", .string("2")))
            members.append(("is_in_billing_retry_period", .string("0")))
        } else if period.end <= at, period.endReason == .voluntary {
            members.append(("expiration_intent", .string("1")))
            members.append(("is_in_billing_retry_period", .string("0")))
        }
        return .object(members)
    }

    /// A verifyReceipt response as the backend got it at `at`.
    func verifyReceipt(at: Int64, environment: String = "Production") -> JSONValue {
        let latest = latestReceiptInfo(at: at)
        let receiptBytes = Array("receipt:\(originalId):\(at)".utf8)
        return .object([
            ("status", .int(0)),
            ("environment", .string(environment)),
            ("receipt", .object([
                ("receipt_type", .string(environment == "Production" ? "Production" : "ProductionSandbox")),
                ("adam_id", .int(1_234_567_890)),
                ("app_item_id", .int(1_234_567_890)),
                ("bundle_id", .string(Catalog.bundleId)),
                ("application_version", .string("42")),
                ("download_id", .int(0)),
                ("version_external_identifier", .int(0)),
                ("receipt_creation_date_ms", .string(String(at))),
                ("request_date_ms", .string(String(at))),
                ("original_purchase_date_ms", .string(String(timeline.periods.first?.start ?? at))),
                ("original_application_version", .string("1.0")),
                ("in_app", .array(Array(latest.prefix(3)))),
            ])),
            ("latest_receipt_info", .array(latest)),
            ("latest_receipt", .string(AppleSigningChain.base64URL(receiptBytes))),
            ("pending_renewal_info", .array([pendingRenewalInfo(at: at)])),
        ])
    }

    // MARK: Notifications V1

    /// An App Store Server Notification V1 of `type` sent at `at`.
    func notificationV1(type: String, at: Int64, originalIdAsNumber: Bool) -> JSONValue {
        guard let period = currentPeriod(at: at) else { return .object([]) }
        var members: [(String, JSONValue)] = [
            ("notification_type", .string(type)),
            ("environment", .string("PROD")),
            ("password", .string("a1b2c3d4e5f6")),
            ("bid", .string(Catalog.bundleId)),
            ("bvrs", .string("42")),
            ("auto_renew_status", .string(autoRenew(at: at) ? "true" : "false")),
            ("auto_renew_product_id", .string(period.product)),
            ("original_transaction_id", originalIdAsNumber ? .number(originalId) : .string(originalId)),
        ]
        if type == "DID_CHANGE_RENEWAL_STATUS" {
            members.append(("auto_renew_status_change_date_ms", .string(String(at))))
            members.append(("auto_renew_status_change_date", .string(UTCCalendar.appleDate(at))))
        }
        if type == "CANCEL", let r = timeline.periods.last(where: { $0.revokedAt == at })?.revokedAt {
            members.append(("cancellation_date_ms", .string(String(r))))
        }
        members.append(("unified_receipt", .object([
            ("status", .int(0)),
            ("environment", .string("Production")),
            ("latest_receipt", .string(AppleSigningChain.base64URL(Array("unified:\(originalId):\(at)".utf8)))),
            ("latest_receipt_info", .array(timeline.periods.filter { $0.start <= at }.reversed()
                .map { receiptEntry($0, at: at) })),
            ("pending_renewal_info", .array([pendingRenewalInfo(at: at)])),
        ])))
        return .object(members)
    }

    // MARK: Notifications V2

    /// `JWSTransactionDecodedPayload` of `period`, as known at `at`.
    func transactionInfo(_ period: TimelinePeriod, at: Int64, reason: String) -> JSONValue {
        let storefront = Catalog.storefronts[subscription.currency] ?? ("USA", "143441", "US")
        var members: [(String, JSONValue)] = [
            ("transactionId", .string(period.transactionId)),
            ("originalTransactionId", .string(originalId)),
            ("webOrderLineItemId", .string(webOrderLineItemId(period))),
            ("bundleId", .string(Catalog.bundleId)),
            ("productId", .string(period.product)),
            ("subscriptionGroupIdentifier", .string("21000001")),
            ("purchaseDate", .int(period.start)),
            ("originalPurchaseDate", .int(timeline.periods[0].start)),
            ("expiresDate", .int(shownExpiry(period))),
            ("quantity", .int(1)),
            ("type", .string("Auto-Renewable Subscription")),
            ("inAppOwnershipType", .string("PURCHASED")),
            ("signedDate", .int(at)),
            ("environment", .string("Production")),
            ("transactionReason", .string(reason)),
            ("storefront", .string(storefront.apple)),
            ("storefrontId", .string(storefront.appleId)),
            ("price", .int(period.trial ? 0 : (period.priceMicros ?? 0) / 1000)),
            ("currency", .string(subscription.currency)),
        ]
        if period.trial || period.introductory {
            members.append(("offerType", .int(1)))
            members.append(("offerDiscountType", .string(period.trial ? "FREE_TRIAL" : "PAY_AS_YOU_GO")))
        }
        if let r = period.revokedAt, r <= at {
            members.append(("revocationDate", .int(r)))
            members.append(("revocationReason", .int(0)))
        } else if period.endReason == .replaced, period.end <= at {
            members.append(("isUpgraded", .bool(true)))
        }
        return .object(members)
    }

    /// `JWSRenewalInfoDecodedPayload` at `at`.
    func renewalInfo(at: Int64) -> JSONValue {
        guard let period = currentPeriod(at: at) else { return .object([]) }
        var members: [(String, JSONValue)] = [
            ("originalTransactionId", .string(originalId)),
            ("autoRenewProductId", .string(period.product)),
            ("productId", .string(period.product)),
            ("autoRenewStatus", .int(autoRenew(at: at) ? 1 : 0)),
            ("signedDate", .int(at)),
            ("environment", .string("Production")),
            ("recentSubscriptionStartDate", .int(period.start)),
            ("renewalDate", .int(period.end)),
        ]
        if let episode = openEpisode(at: at) {
            members.append(("expirationIntent", .int(2)))
            members.append(("isInBillingRetryPeriod", .bool(true)))
            if episode.graceEnd > episode.start && at < episode.graceEnd {
                members.append(("gracePeriodExpiresDate", .int(episode.graceEnd)))
            }
        } else if lostEpisode(at: at) {
            members.append(("expirationIntent", .int(2)))
            members.append(("isInBillingRetryPeriod", .bool(false)))
        } else if period.end <= at, period.endReason == .voluntary {
            members.append(("expirationIntent", .int(1)))
        }
        return .object(members)
    }

    /// `{"signedPayload": JWS}` of a V2 notification about `period`, signed by `chain`.
    func notificationV2(type: String, subtype: String?, at: Int64, period: TimelinePeriod, uuid: String,
                        reason: String, chain: AppleSigningChain) -> JSONValue {
        var payload: [(String, JSONValue)] = [("notificationType", .string(type))]
        if let subtype { payload.append(("subtype", .string(subtype))) }
        payload.append(contentsOf: [
            ("notificationUUID", .string(uuid)),
            ("version", .string("2.0")),
            ("signedDate", .int(at)),
            ("data", .object([
                ("appAppleId", .int(1_234_567_890)),
                ("bundleId", .string(Catalog.bundleId)),
                ("bundleVersion", .string("42")),
                ("environment", .string("Production")),
                ("signedTransactionInfo", .string(chain.sign(transactionInfo(period, at: at, reason: reason)))),
                ("signedRenewalInfo", .string(chain.sign(renewalInfo(at: at)))),
                ("status", .int(openEpisode(at: at) == nil ? (period.end > at ? 1 : 2) : 3)),
            ])),
        ])
        return .object([("signedPayload", .string(chain.sign(.object(payload))))])
    }
}
