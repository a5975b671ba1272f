import Facts

/// Where a record came from: enough to find it again by hand.
public struct Provenance: Sendable, Hashable, CustomStringConvertible {
    /// The input file, as the user named it (or as found when walking a folder).
    public var file: String
    /// The member inside a tar or zip archive; `nil` for plain and gzip files.
    public var member: String?
    /// 1-based line number for line-oriented content (`.ndjson`, `.jsonl`); 0-based element index for a JSON
    /// array file; 0 for a single-record `.json` file.
    public var position: Int64

    public init(file: String, member: String? = nil, position: Int64) {
        self.file = file
        self.member = member
        self.position = position
    }

    public var description: String {
        if let member { return "\(file)[\(member)]:\(position)" }
        return "\(file):\(position)"
    }
}

/// One record's bytes as a container yielded them: one JSON text (not yet parsed).
public struct RawRecord: Sendable {
    public var bytes: [UInt8]
    public var provenance: Provenance

    public init(bytes: [UInt8], provenance: Provenance) {
        self.bytes = bytes
        self.provenance = provenance
    }
}

/// Context a backend logged around a payload (`inputs.md`, "Envelope"). Every field is optional.
public struct Envelope: Sendable, Hashable {
    /// When the backend received the payload (ms, UTC).
    public var receivedAt: Millis?
    public var appUserId: String?
    public var packageName: String?
    /// `subscription_id` or `product_id`.
    public var productId: String?
    public var purchaseToken: String?
    public var orderId: String?
    /// ISO 4217.
    public var currency: String?
    /// ISO 3166 alpha-3, as the store writes it.
    public var storefront: String?

    public init(receivedAt: Millis? = nil, appUserId: String? = nil, packageName: String? = nil,
                productId: String? = nil, purchaseToken: String? = nil, orderId: String? = nil,
                currency: String? = nil, storefront: String? = nil) {
        self.receivedAt = receivedAt
        self.appUserId = appUserId
        self.packageName = packageName
        self.productId = productId
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.currency = currency
        self.storefront = storefront
    }
}

/// A store payload: a JSON object, or a compact JWS (`header.payload.signature`, base64url) still unverified.
public enum Payload: Sendable, Hashable {
    case json(JSON)
    case jws(String)
}

/// A record the ingest understood: which payload it holds, its context, and the key that makes the same
/// record from two files one (`inputs.md`: the delivery id a store gives, ``RecordIdentity``, else a digest).
public struct ParsedRecord: Sendable {
    public var provenance: Provenance
    public var source: SourceKind
    public var envelope: Envelope
    public var payload: Payload
    /// `msg:<message id>:<hex SHA-256 of the canonical data>`, `uuid:<unique id>` or
    /// `sha256:<hex of the canonical payload and context>` (see `DedupKey`).
    public var dedupKey: String
    /// The ``Payload/jws(_:)`` text as the parser decoded it to recognise it (not verified), so that the
    /// translator does not decode it again (decoding was a tenth of ingest's work); `nil` when the parser did not
    /// decode it or it does not decode.
    public var decodedJWS: CompactJWS?
    /// The envelope's `received_at` was an epoch number in seconds (`warnings.timestamps_in_seconds`).
    public var receivedAtInSeconds: Bool

    public init(provenance: Provenance, source: SourceKind, envelope: Envelope, payload: Payload, dedupKey: String,
                decodedJWS: CompactJWS? = nil, receivedAtInSeconds: Bool = false) {
        self.provenance = provenance
        self.source = source
        self.envelope = envelope
        self.payload = payload
        self.dedupKey = dedupKey
        self.decodedJWS = decodedJWS
        self.receivedAtInSeconds = receivedAtInSeconds
    }
}

/// Damage found in a container: everything before ``offset`` was read; the rest of the file is lost.
public struct Damage: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// Byte offset in the file (compressed bytes for gzip) where reading stopped.
    public var offset: Int64
    public var reason: String

    public init(file: String, offset: Int64, reason: String) {
        self.file = file
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(file) at byte \(offset): \(reason)" }
}
