import Crypto
import Facts
import Ingest

/// A record that could not be used, as the `quarantine` table keeps it.
public struct QuarantineEntry: Sendable, Hashable {
    /// Raw bytes kept per record: enough to see what it was without letting one huge bad record bloat the ledger.
    public static let keptRawBytes = 4096

    /// `QuarantineReason` raw value.
    public var reason: String
    public var detail: String
    public var provenance: Provenance
    /// The first ``keptRawBytes`` bytes of the record.
    public var raw: [UInt8]
    /// The record's full size in bytes.
    public var rawSize: Int
    /// Hex SHA-256 of (file, member, position, all raw bytes): the same bad record read again from the same
    /// place is one row, while two identical bad lines (two "502 Bad Gateway" pages in one log) are two bad
    /// records, as an analyst counts them. For a part: of the record's dedup key and the part's path.
    public var key: String
    /// For a part of a used record, its path in the payload (`latest_receipt_info[2]`); `nil` for a whole record.
    public var part: String?

    /// Builds the entry from the complete raw bytes (only the first ``keptRawBytes`` are kept).
    public init(reason: String, detail: String, provenance: Provenance, rawBytes: [UInt8]) {
        self.reason = reason
        self.detail = detail
        self.provenance = provenance
        self.raw = Array(rawBytes.prefix(Self.keptRawBytes))
        self.rawSize = rawBytes.count
        var hasher = SHA256()
        var encoder = DigestEncoder()
        encoder.append(provenance.file)
        encoder.append(provenance.member)
        encoder.append(provenance.position)
        hasher.update(data: encoder.bytes)
        hasher.update(data: rawBytes)
        self.key = hasher.finalize().hexString
    }

    /// The entry of an unusable part of the used record `record` (its dedup key), read at `provenance`: one entry
    /// per record and path, whichever copy of the record it came from.
    public init(part: QuarantinedPart, record: String, provenance: Provenance) {
        self.reason = part.reason.rawValue
        self.detail = part.detail
        self.provenance = provenance
        self.raw = Array(part.raw.prefix(Self.keptRawBytes))
        self.rawSize = part.raw.count
        self.part = part.path
        var encoder = DigestEncoder()
        encoder.append("part")
        encoder.append(record)
        encoder.append(part.path)
        self.key = SHA256.hash(data: encoder.bytes).hexString
    }

    /// An entry read back from the ledger.
    public init(reason: String, detail: String, provenance: Provenance, raw: [UInt8], rawSize: Int, key: String,
                part: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.provenance = provenance
        self.raw = raw
        self.rawSize = rawSize
        self.key = key
        self.part = part
    }
}
