import Crypto

/// The key that makes the same record read from two files (or twice from one) one record.
///
/// - A payload with a ``RecordIdentity/message(_:)`` id (a push message): `msg:<id>:<hex>`, the id and the
///   SHA-256 of its data in canonical form. A redelivery repeats both and is one record; the same id with other
///   data (exports of two subscriptions merged, test fixtures reusing a documentation example's id) is another
///   message (`warnings.message_id_conflicts` counts them from the keys: same prefix up to the last `:`).
/// - A payload with a ``RecordIdentity/unique(_:)`` id (a notification's UUID, which the store repeats when it
///   resends it): `uuid:<id>`.
/// - Anything else: `sha256:<hex>` of the canonical payload (members sorted, no whitespace; a JWS as its
///   text), a 0 byte, then the source, every envelope context field and, unless the payload dates its own
///   statement (``RecordIdentity/dated``), `received_at` (as epoch ms), each as `name=value` and a 0 byte. So
///   two copies of one logged record that differ only in member order, whitespace or the spelling of
///   `received_at` share a key, while two resources with identical bodies but different purchase tokens (or
///   products, users, packages: context the payload lacks and the translators use) stay distinct, and so do two
///   fetches of an unchanged resource: a translator dates what a payload without its own statement time says by
///   `received_at`, so each fetch states other facts, and a ledger that kept one copy of both could not rebuild
///   the other's facts (`reprocess`). An RTDN or a receipt logged twice is one record either way.
enum DedupKey {
    static func make(source: SourceKind, payload: Payload, envelope: Envelope, identity: RecordIdentity?) -> String {
        var messageId: String?
        switch identity {
        case .unique(let id)?: return "uuid:" + id
        case .message(let id)?: messageId = id
        case .dated?, nil: break
        }
        var input: [UInt8]
        switch payload {
        case .json(let value): input = JSONWriter.canonical(value)
        case .jws(let text): input = Array(text.utf8)
        }
        if let messageId { return "msg:" + messageId + ":" + hex(SHA256.hash(data: input), prefix: "") }
        input.append(0)
        let context: [(StaticString, String?)] = [
            ("source", source.rawValue), ("app_user_id", envelope.appUserId), ("package_name", envelope.packageName),
            ("product_id", envelope.productId), ("purchase_token", envelope.purchaseToken),
            ("order_id", envelope.orderId), ("currency", envelope.currency), ("storefront", envelope.storefront),
            // Only a payload that does not date its own statement is dated by its logging (``RecordIdentity/dated``).
            ("received_at", identity == .dated ? nil : envelope.receivedAt.map(String.init)),
        ]
        for case let (name, value?) in context {
            input.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            input.append(UInt8(ascii: "="))
            input.append(contentsOf: value.utf8)
            input.append(0)
        }
        return hex(SHA256.hash(data: input), prefix: "sha256:")
    }

    /// `prefix` and the lowercase hex of `digest`.
    private static func hex(_ digest: SHA256.Digest, prefix: StaticString) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = Array(UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        text.reserveCapacity(text.count + 64)
        for byte in digest {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
