import Facts
import Ingest

/// Turns one Google Play record (RTDN, `purchases.subscriptions.get` v1, `purchases.subscriptionsv2.get`,
/// voided purchase, `purchases.products.get`, `purchases.productsv2`) into the facts it states; see ``GoogleFactKind`` for what each
/// fact means. The translator states only what the record says: orders, episodes and outcomes are rebuilt
/// from the set of facts by ``GoogleHistoryBuilder``.
///
/// Outcomes: test purchases are `.excluded(.test)` with a ``Fact/Kind/testPurchase`` marker for their token (so
/// that the token's other records, RTDNs included, are excluded too, in whatever order they come); RTDN test
/// notifications are `.excluded(.test)`; a package other than ``packageNames`` is `.quarantined(.wrongPackage)`; a
/// resource without the token or product the envelope must supply is `.quarantined(.missingContext)`; a field of
/// the wrong type or a required field missing is `.quarantined(.invalidPayload)`, a time outside ``times``
/// `.quarantined(.implausibleTimestamp)`, each with the field named. Where a payload has several units (line
/// items, voided purchases of a list), an unusable unit is quarantined as a part and the others are used.
/// Never traps on input.
public struct PlayStoreTranslator: StoreTranslator {
    /// The version of this translator's rules and of the rows its facts are stored as: the translation's own
    /// version (raised whenever a change makes some payload yield other facts or another outcome; 3: v2 payment
    /// state from the offer phase; 4: v1 `paymentState` 3 pending; 5: v2 latest successful order, introductory
    /// offers, declined price increases; 6: a v2 `offerId` is no offer flag; 7: only opt-in increases; 8: product
    /// quantities and voided quantities read, a count outside 1...1000 quarantined; 9: a voided-purchases item's
    /// `voidedQuantity` kept whatever its `refundType`; 10: a pending price step-up consent, an active prepaid plan
    /// read as cancelled by the user, v1 introductory cycles counted after a free trial, a pending refund review used;
    /// 11: a negative price quarantined; 12: a v2 proration phase flagged `.prorated`; 13: a one-time product's
    /// `purchaseType` 1 or 2 flagged `.free`; 14: a v2 order's add-ons priced with its base plan; 15: a
    /// Pub/Sub pull response's messages and a bare Pub/Sub message read; `ProductPurchaseV2` read; 16: a deferred
    /// replacement's product never an add-on, a `ProductPurchaseV2` PURCHASED without its completion time a sale;
    /// 17: marker messages read by value, `testPurchase: false` no test; an unreadable primary line item
    /// quarantines the record, any other unprices the order; a price above ``Fact/largestAmountMicros`` out of
    /// range; 18: a test purchase marked whatever its line items say; 19: a v2 pending purchase without any time
    /// used with no facts, a test one marked) plus ``GoogleFactCodec/version``, so that
    /// ledgers translated before either changed are reprocessed (``RulesVersion``).
    public static let rulesVersion: Int64 = 19 + GoogleFactCodec.version

    /// Package names accepted; empty accepts every package.
    public let packageNames: Set<String>
    /// The instants a payload may state (the run's clock is in it).
    public let times: PlausibleTimes

    /// A translator accepting payloads of `packageNames` only (any package when empty; others are quarantined
    /// as `wrong_package`), and times inside `times` only.
    public init(packageNames: Set<String>, times: PlausibleTimes) {
        self.packageNames = packageNames
        self.times = times
    }

    public var platform: Platform { .google }

    /// The facts `record` states; `record.source` is one of the `google.*` kinds.
    public func translate(_ record: ParsedRecord) -> Translation {
        guard case .json(let body) = record.payload, case .object = body else {
            return .quarantined(.invalidPayload, detail: "a Google \(record.source.rawValue) payload must be a JSON object")
        }
        let fields = PayloadFields(body, times: times)
        // A Pub/Sub wrapper (a push, a pulled message, a pull response) is judged by the notifications it holds,
        // each by its own `packageName` (``oneNotification(_:_:)``), not by the envelope.
        let wrapped = record.source == .googleRTDN && (fields.has("message") || fields.has("receivedMessages") || fields.has("data"))
        if !wrapped, let package = (try? fields.string("packageName")) ?? record.envelope.packageName,
           !packageNames.isEmpty, !packageNames.contains(package) {
            return .quarantined(.wrongPackage, detail: "package \(package) is not one of \(packageNames.sorted().joined(separator: ", "))")
        }
        do throws(PayloadError) {
            switch (try fields.string("kind"), record.source) {
            case ("androidpublisher#subscriptionPurchaseV2", _), (_, .googleSubscriptionV2):
                return try subscriptionV2(fields, record.envelope)
            case ("androidpublisher#subscriptionPurchase", _), (_, .googleSubscriptionV1):
                return try subscriptionV1(fields, record.envelope)
            case ("androidpublisher#productPurchaseV2", _), (_, .googleProductV2):
                return try productV2(fields, record.envelope)
            case ("androidpublisher#productPurchase", _), (_, .googleProductV1):
                return try product(fields, record.envelope)
            case ("androidpublisher#voidedPurchase", _), (_, .googleVoidedPurchase):
                return try voided(fields, record.envelope)
            case (_, .googleRTDN):
                return try notification(fields, record.envelope)
            default:
                return .quarantined(.unrecognized, detail: "\(record.source.rawValue) is not a Google payload")
            }
        } catch {
            return .quarantined(error.reason, detail: error.detail)
        }
    }

    /// The `excluded(test)` outcome of a record showing that `token` is a test purchase, with the marker fact that
    /// excludes every other record of the token (`at`: the purchase's start as the record states it).
    func testPurchase(token: String, at: Millis, observedAt: Millis) -> Translation {
        .excluded(.test, markers: rows([.testPurchase(token: token, at: at)], observedAt: observedAt))
    }

    /// The `user` facts of a token: the payload's `obfuscatedExternalAccountId` and the envelope's `app_user_id`.
    func userFacts(token: String, at: Millis, accountId: String?, envelope: Envelope) -> [GoogleFact] {
        var ids: [String] = []
        if let accountId { ids.append(accountId) }
        if let appUser = envelope.appUserId, !appUser.isEmpty, appUser != accountId { ids.append(appUser) }
        return ids.map { .user(token: token, at: at, id: $0) }
    }

    /// `facts` as the ledger's rows (``GoogleFactCodec``), each stated at `observedAt`.
    func rows(_ facts: [GoogleFact], observedAt: Millis) -> [Fact] {
        facts.map { GoogleFactCodec.encode($0, observedAt: observedAt) }
    }
}
