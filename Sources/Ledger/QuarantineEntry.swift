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
    /// records, as an analyst counts them.
    public var key: String

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

    /// An entry read back from the ledger.
    public init(reason: String, detail: String, provenance: Provenance, raw: [UInt8], rawSize: Int, key: String) {
        self.reason = reason
        self.detail = detail
        self.provenance = provenance
        self.raw = raw
        self.rawSize = rawSize
        self.key = key
    }
}
