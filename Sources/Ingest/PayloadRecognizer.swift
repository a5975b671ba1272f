import Facts

/// One store's payload shapes: how the record parser tells this store's payloads from others when no envelope
/// `source` names them, and how it unwraps the wrappers the store puts around them (a signed envelope, a push
/// message). Each store module provides one; ``RecordParser`` holds a list of them and knows no store itself.
///
/// A recognizer only looks: it verifies nothing and interprets no field beyond what tells shapes apart and
/// identifies a delivery. Shapes of different stores must not overlap: the parser takes the first match.
public protocol PayloadRecognizer: Sendable {
    /// The kinds of this store's payloads: the envelope `source` names it accepts.
    var sources: [SourceKind] { get }

    /// What `value` (a record's payload: an object, or a string that may be a JWS) is when it is one of this
    /// store's shapes, unwrapped; `nil` when it is none of them.
    /// - Throws: a ``RecordRejection`` when it is this store's shape but its wrapper is broken (a push whose
    ///   data is not base64, a signed envelope whose payload is not a string), naming the field.
    func recognize(_ value: JSON) throws(RecordRejection) -> RecognizedPayload?
}

/// A payload a ``PayloadRecognizer`` recognised: its kind, its unwrapped form and what its wrapper said.
public struct RecognizedPayload: Sendable, Hashable {
    public var source: SourceKind
    public var payload: Payload
    /// The identity the store gives the delivery, when it gives one (see ``RecordIdentity``).
    public var identity: RecordIdentity?
    /// When the wrapper was published (ms, UTC): the record's time when its envelope has no `received_at`.
    public var publishedAt: Millis?
    /// The JWS of ``Payload/jws(_:)`` as decoded to recognise it (unverified), so that it is not decoded again.
    public var jws: CompactJWS?

    public init(source: SourceKind, payload: Payload, identity: RecordIdentity? = nil, publishedAt: Millis? = nil,
                jws: CompactJWS? = nil) {
        self.source = source
        self.payload = payload
        self.identity = identity
        self.publishedAt = publishedAt
        self.jws = jws
    }
}

/// An identity a store gives a delivered payload, which makes two copies of it one record (``DedupKey``).
public enum RecordIdentity: Sendable, Hashable {
    /// An id a redelivery repeats together with the same data (a push message's id): a copy has both the id and
    /// the data; the same id with other data is another record (`warnings.message_id_conflicts`).
    case message(String)
    /// An id the store gives one payload only (a notification's UUID): every copy with it is one record.
    case unique(String)
    /// No id, but the payload says when the store made its statement (a decoded RTDN's `eventTimeMillis`, a
    /// receipt's `request_date_ms`, a signed payload's `signedDate`): what it states does not depend on when it
    /// was logged, so every copy of its content is one record, whatever its `received_at`.
    case dated
}

/// One store's translation of the records whose payloads it recognises into the facts they state. Each store
/// module provides one; the pipeline hands each record to the translator of its source's platform.
public protocol StoreTranslator: Sendable {
    /// The store whose records this translates.
    var platform: Platform { get }

    /// What `record` states: its facts (with the parts set aside that could not be read), or why it is excluded
    /// or quarantined. Never throws and never traps on input.
    func translate(_ record: ParsedRecord) -> Translation
}
