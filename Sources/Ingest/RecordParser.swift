import Facts

/// Turns a raw record (one JSON text) into a ``ParsedRecord``: which store payload it holds, the context its
/// envelope adds, and its deduplication key (`inputs.md`, "Records").
///
/// A record is an **envelope** (an object with a `body` member, plus `received_at`, `source` and context) or a
/// **raw payload**. The body may be an object, a string holding escaped JSON, or a JWS string. The payload
/// type comes from `source` when given, else from the payload's shape, as the stores' ``PayloadRecognizer``s
/// tell it (the first that recognises it wins); either way the wrappers a store puts around its payloads are
/// unwrapped. Nothing here names a store, verifies signatures or interprets store fields: that is the store
/// modules' work.
///
/// Times: the envelope's `received_at` (RFC 3339, or an epoch number: below 10^11 it is seconds, as Python's
/// `time.time()` writes it, else milliseconds) and, without one, a push message's publish time must lie in
/// ``times``, else the record is quarantined `implausible_timestamp`.
public struct RecordParser: Sendable {
    /// The version of the parsing rules (envelopes, sniffing, dedup keys): raised whenever a change makes some
    /// record parse differently, so that ledgers made before it are reprocessed. 2: `received_at` in epoch
    /// seconds, push messages keyed on id and data, plausible times. 3: the stores' shapes come from their
    /// modules, and App Store Server API responses are recognised. 4: a whole `voidedpurchases.list` response is
    /// recognised. 5: `received_at` is part of a content key (``DedupKey``). 6: only of a payload that does not
    /// date its own statement; a pretty-printed document among lines is one record. 7: Pub/Sub messages pulled
    /// (`ackId`), bare, or in a whole pull response (`receivedMessages`) are recognised. 8: an empty pull response
    /// (`receivedMessages` `{}` or `null`) too. 9: a record whose parsed values would pass
    /// ``JSONParser/memoryBudget``, or longer than 16 MiB, is quarantined; a Pub/Sub message without an id keyed as
    /// the RTDN it carries. 10: an App Store Get Notification History page (`notificationHistory`) is recognised.
    public static let rulesVersion: Int64 = 10

    /// The instants a record may state; the run's clock is in it.
    public let times: PlausibleTimes
    /// The stores' payload shapes, asked in this order.
    public let recognizers: [any PayloadRecognizer]
    /// Every store's kinds by name: the envelope `source`s accepted.
    private let sources: [String: SourceKind]

    /// A parser checking times against `times` (see ``PlausibleTimes``) and recognising payloads with
    /// `recognizers`; it holds no other state.
    public init(times: PlausibleTimes, recognizers: [any PayloadRecognizer]) {
        self.times = times
        self.recognizers = recognizers
        var sources: [String: SourceKind] = [:]
        for recognizer in recognizers {
            for kind in recognizer.sources { sources[kind.rawValue] = kind }
        }
        self.sources = sources
    }

    /// Parses one record: its envelope (if any), the payload kind (from `source` or recognised by shape), the payload itself and its deduplication key. Anything unusable is a ``RecordRejection``
    /// with the quarantine reason and a detail naming what was wrong.
    public func parse(_ raw: RawRecord) -> Result<ParsedRecord, RecordRejection> {
        do throws(RecordRejection) {
            return .success(try parseRecord(raw))
        } catch {
            return .failure(error)
        }
    }

    private func parseRecord(_ raw: RawRecord) throws(RecordRejection) -> ParsedRecord {
        let value: JSON
        do {
            value = try JSONParser.parse(raw.bytes)
        } catch {
            // A JWS logged bare, without quotes, is not JSON but is a record all the same.
            guard error.kind == .syntax, let text = Self.bareJWS(raw.bytes) else {
                throw RecordRejection(reason: error.quarantineReason, detail: error.description)
            }
            value = .string(text)
        }
        var envelope = Envelope()
        var inSeconds = false
        var declared: SourceKind?
        var body = value
        if let object = value.object, let envelopeBody = object["body"] {
            (envelope, inSeconds) = try Self.envelope(object)
            declared = try source(object)
            body = try Self.body(envelopeBody)
        }
        if let receivedAt = envelope.receivedAt, !times.contains(receivedAt) {
            throw RecordRejection(reason: .implausibleTimestamp,
                                  detail: times.detail(field: "envelope received_at", instant: receivedAt))
        }
        let sniffed = try recognize(body, declared: declared)
        let source = declared ?? sniffed.source
        // A Pub/Sub message's `publishTime` dates a record logged without `received_at`, as a pull response's
        // messages are dated. Only a fallback (a notification states its own `eventTimeMillis`): an implausible one
        // is not used, and the record stands or falls by its own times.
        if envelope.receivedAt == nil, let published = sniffed.publishedAt, times.contains(published) {
            envelope.receivedAt = published
        }
        let key = DedupKey.make(source: source, payload: sniffed.payload, envelope: envelope, identity: sniffed.identity)
        return ParsedRecord(provenance: raw.provenance, source: source, envelope: envelope, payload: sniffed.payload,
                            dedupKey: key, decodedJWS: sniffed.jws, receivedAtInSeconds: inSeconds)
    }

    /// The payload's kind and unwrapped form. With a declared source, a body of no known shape is passed on as
    /// it is (the envelope says what it is; the translator judges it); wrappers are unwrapped either way.
    func recognize(_ body: JSON, declared: SourceKind?) throws(RecordRejection) -> RecognizedPayload {
        for recognizer in recognizers {
            if let recognized = try recognizer.recognize(body) { return recognized }
        }
        if let declared {
            if case .string(let text) = body { return RecognizedPayload(source: declared, payload: .jws(text)) }
            return RecognizedPayload(source: declared, payload: .json(body))
        }
        switch body {
        case .object(let object):
            throw RecordRejection(reason: .unrecognized, detail: "no known payload shape; top-level keys: \(Self.keyList(object))")
        case .string(let text):
            guard CompactJWS.looksLikeJWS(text) else {
                throw RecordRejection(reason: .unrecognized, detail: "a JSON string that is not a JWS")
            }
            guard let payload = CompactJWS(text)?.payload.object else {
                throw RecordRejection(reason: .unrecognized, detail: "a JWS whose payload is not base64url JSON")
            }
            throw RecordRejection(reason: .unrecognized, detail: "a JWS of no known payload; payload keys: \(Self.keyList(payload))")
        default:
            throw RecordRejection(reason: .unrecognized, detail: "a JSON \(JSON.typeName(body)), not a store payload")
        }
    }

    /// Up to 10 of `object`'s keys, for a detail.
    static func keyList(_ object: JSONObject) -> String {
        guard object.count > 0 else { return "(none)" }
        let keys = object.keys.prefix(10).joined(separator: ", ")
        return object.count > 10 ? keys + ", ..." : keys
    }

    /// The envelope's `source`, when present: one of the stores' kinds.
    func source(_ object: JSONObject) throws(RecordRejection) -> SourceKind? {
        guard let value = object["source"], !value.isNull else { return nil }
        guard case .string(let text) = value else {
            throw RecordRejection(reason: .invalidPayload, detail: "envelope source is a JSON \(JSON.typeName(value)), not a string")
        }
        guard let kind = sources[text] else {
            throw RecordRejection(reason: .unrecognized, detail: "unknown envelope source \"\(text)\"")
        }
        return kind
    }

    /// The payload inside an envelope's `body`: an object as is; a string holding JSON parsed; a JWS string kept.
    static func body(_ body: JSON) throws(RecordRejection) -> JSON {
        switch body {
        case .object:
            return body
        case .string(let text):
            let trimmed = String(text.trimmingASCIIWhitespace())
            if CompactJWS.looksLikeJWS(trimmed) { return .string(trimmed) }
            do {
                return try JSONParser.parse(trimmed)
            } catch {
                throw RecordRejection(reason: error.quarantineReason, detail: "envelope body string: \(error.description)")
            }
        default:
            throw RecordRejection(reason: .invalidPayload,
                                  detail: "envelope body is a JSON \(JSON.typeName(body)), not an object or a string")
        }
    }

    /// The context fields of an envelope (`inputs.md`), and whether `received_at` was in epoch seconds.
    static func envelope(_ object: JSONObject) throws(RecordRejection) -> (Envelope, inSeconds: Bool) {
        var envelope = Envelope()
        var inSeconds = false
        if let value = object["received_at"], !value.isNull {
            guard let time = receivedAt(value) else {
                throw RecordRejection(reason: .invalidPayload,
                                      detail: "envelope received_at \(JSONWriter.compact(value).prefix(80)) is neither RFC 3339 nor an epoch number")
            }
            envelope.receivedAt = time.millis
            inSeconds = time.inSeconds
        }
        envelope.appUserId = try text(object, "app_user_id")
        envelope.packageName = try text(object, "package_name")
        let subscriptionId = try text(object, "subscription_id")
        let productId = try text(object, "product_id")
        envelope.productId = subscriptionId ?? productId
        envelope.purchaseToken = try text(object, "purchase_token")
        envelope.orderId = try text(object, "order_id")
        envelope.currency = try text(object, "currency")
        envelope.storefront = try text(object, "storefront")
        return (envelope, inSeconds)
    }

    /// `received_at` in ms UTC: RFC 3339, or an epoch number (a JSON number or a numeric string). An epoch
    /// number from 0 up to 10^11 is in seconds (10^11 ms is 1973, 10^11 s the year 5138), fractions kept to the
    /// millisecond (`1756200000.123`, Python's `time.time()`); any other number is milliseconds (a fraction
    /// dropped). A number beyond `Int64` saturates, so that the plausibility check rejects it by its value.
    static func receivedAt(_ value: JSON) -> (millis: Millis, inSeconds: Bool)? {
        switch value {
        case .number(let text):
            return EpochNumber(text).map { ($0.millis, $0.inSeconds) }
        case .string(let text):
            let trimmed = text.trimmingASCIIWhitespace()
            if let number = EpochNumber(trimmed) { return (number.millis, number.inSeconds) }
            return RFC3339.millis(String(trimmed)).map { ($0, false) }
        default:
            return nil
        }
    }

    /// A context field: a non-empty string (a number is taken as its text); absent, null or `""` is `nil`.
    static func text(_ object: JSONObject, _ key: String) throws(RecordRejection) -> String? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .string, .number: return value.nonEmptyString
        default:
            throw RecordRejection(reason: .invalidPayload,
                                  detail: "envelope \(key) is a JSON \(JSON.typeName(value)), not a string")
        }
    }

    /// The text of a record that is a JWS written without quotes, if it is one.
    static func bareJWS(_ bytes: [UInt8]) -> String? {
        let text = String(String(decoding: bytes, as: UTF8.self).trimmingASCIIWhitespace())
        return CompactJWS.looksLikeJWS(text) ? text : nil
    }
}
