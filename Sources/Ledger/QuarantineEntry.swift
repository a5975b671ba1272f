import Crypto
import Facts
import Ingest

/// A record that could not be used, or an unusable part of a used one, as ingest hands it to the `quarantine`
/// table: kept whole (compressed), so that `reprocess` can try it again with other options or newer rules.
public struct QuarantineEntry: Sendable, Hashable {
    /// `QuarantineReason` raw value.
    public var reason: String
    public var detail: String
    public var provenance: Provenance
    /// The whole record (or part) as read, compressed.
    public var payload: CompressedPayload
    /// The record's (or part's) size in bytes, as read.
    public var rawSize: Int
    /// Hex SHA-256 of (file, member, position, all raw bytes): the same bad record read again from the same
    /// place is one row, while two identical bad lines (two "502 Bad Gateway" pages in one log) are two bad
    /// records, as an analyst counts them. For a part: of the record's dedup key and the part's path.
    public var key: String
    /// The rules that quarantined it (``RulesVersion``).
    public var rulesVersion: Int64
    /// For a part of a used record, its path in the payload (`latest_receipt_info[2]`); `nil` for a whole record.
    public var part: String?

    /// An entry of a record read at `provenance`, `rawSize` bytes long, compressed as `payload`; `key` is
    /// ``key(provenance:rawBytes:)`` of its bytes.
    public init(reason: String, detail: String, provenance: Provenance, payload: CompressedPayload, rawSize: Int,
                key: String, rulesVersion: Int64) {
        self.reason = reason
        self.detail = detail
        self.provenance = provenance
        self.payload = payload
        self.rawSize = rawSize
        self.key = key
        self.rulesVersion = rulesVersion
        self.part = nil
    }

    /// The entry of an unusable part of the used record `record` (its dedup key), read at `provenance`, its bytes
    /// compressed as `payload`: one entry per record and path, whichever copy of the record it came from.
    public init(part: QuarantinedPart, record: String, provenance: Provenance, payload: CompressedPayload,
                rulesVersion: Int64) {
        self.reason = part.reason.rawValue
        self.detail = part.detail
        self.provenance = provenance
        self.payload = payload
        self.rawSize = part.raw.count
        self.rulesVersion = rulesVersion
        self.part = part.path
        var encoder = DigestEncoder()
        encoder.append("part")
        encoder.append(record)
        encoder.append(part.path)
        self.key = SHA256.hash(data: encoder.bytes).hexString
    }

    /// The quarantine key of a record read at `provenance` with these bytes.
    public static func key(provenance: Provenance, rawBytes: [UInt8]) -> String {
        var hasher = SHA256()
        var encoder = DigestEncoder()
        encoder.append(provenance.file)
        encoder.append(provenance.member)
        encoder.append(provenance.position)
        hasher.update(data: encoder.bytes)
        hasher.update(data: rawBytes)
        return hasher.finalize().hexString
    }
}

/// A quarantined record (or part of a used one) as `quarantine` lists it.
public struct QuarantinedRecord: Sendable, Hashable {
    public var reason: String
    public var detail: String
    public var provenance: Provenance
    /// The record's bytes: all of them, or for a row kept by a release before payloads were kept, the first
    /// 4096 (see ``isComplete``).
    public var raw: [UInt8]
    /// The record's size in bytes, as read.
    public var rawSize: Int
    /// For a part of a used record, its path in the payload; `nil` for a whole record.
    public var part: String?

    public init(reason: String, detail: String, provenance: Provenance, raw: [UInt8], rawSize: Int, part: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.provenance = provenance
        self.raw = raw
        self.rawSize = rawSize
        self.part = part
    }

    /// `false` for a row whose bytes were cut at 4096 by an earlier release.
    public var isComplete: Bool { raw.count == rawSize }
}
