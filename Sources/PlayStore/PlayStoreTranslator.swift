import Facts
import Ingest

/// Turns one Google Play record (RTDN, `purchases.subscriptions.get` v1, `purchases.subscriptionsv2.get`,
/// voided purchase, `purchases.products.get`) into the facts it states; see ``GoogleFactKind`` for what each
/// fact means. The translator states only what the record says: orders, episodes and outcomes are rebuilt
/// from the set of facts by ``GoogleHistoryBuilder``.
///
/// Outcomes: test purchases and test notifications are `.excluded(.test)`; a package other than
/// ``packageNames`` is `.quarantined(.wrongPackage)`; a resource without the token or product the envelope must
/// supply is `.quarantined(.missingContext)`; a field of the wrong type or a required field missing is
/// `.quarantined(.invalidPayload)` with the field named. Never traps on input.
public struct PlayStoreTranslator: Sendable {
    /// The version of this translator's rules: raised whenever a change makes some payload yield other facts
    /// or another outcome, so that ledgers translated before it are reprocessed (``RulesVersion``).
    public static let rulesVersion: Int64 = 1

    /// Package names accepted; empty accepts every package.
    public let packageNames: Set<String>

    /// A translator accepting payloads of `packageNames` only (any package when empty; others are quarantined
    /// as `wrong_package`).
    public init(packageNames: Set<String>) {
        self.packageNames = packageNames
    }

    /// The facts `record` states; `record.source` is one of the `google.*` kinds.
    public func translate(_ record: ParsedRecord) -> Translation {
        guard case .json(let body) = record.payload, case .object = body else {
            return .quarantined(.invalidPayload, detail: "a Google \(record.source.rawValue) payload must be a JSON object")
        }
        let fields = PayloadFields(body)
        if let package = (try? fields.string("packageName")) ?? record.envelope.packageName,
           !packageNames.isEmpty, !packageNames.contains(package) {
            return .quarantined(.wrongPackage, detail: "package \(package) is not one of \(packageNames.sorted().joined(separator: ", "))")
        }
        do throws(PayloadError) {
            switch (try fields.string("kind"), record.source) {
            case ("androidpublisher#subscriptionPurchaseV2", _), (_, .googleSubscriptionV2):
                return try subscriptionV2(fields, record.envelope)
            case ("androidpublisher#subscriptionPurchase", _), (_, .googleSubscriptionV1):
                return try subscriptionV1(fields, record.envelope)
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
            return .quarantined(.invalidPayload, detail: error.detail)
        }
    }

    /// The `user` facts of a token: the payload's `obfuscatedExternalAccountId` and the envelope's `app_user_id`.
    func userFacts(token: String, at: Millis, observedAt: Millis, accountId: String?, envelope: Envelope) -> [Fact] {
        var ids: [String] = []
        if let accountId { ids.append(accountId) }
        if let appUser = envelope.appUserId, !appUser.isEmpty, appUser != accountId { ids.append(appUser) }
        return ids.map { Fact(platform: .google, subject: token, kind: .user, at: at, observedAt: observedAt, ref: $0) }
    }
}
