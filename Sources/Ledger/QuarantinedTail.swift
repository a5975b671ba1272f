import Ingest

/// The last quarantined record of a file (or of an archive member) whose JSON was malformed: possibly a line cut
/// because the file was still being written when it was read (a log appended to by another process).
///
/// When the file is read again and the same place now holds a longer record that begins with these very bytes,
/// the line was completed since: the ingest forgets this entry (``LedgerStore/forgetQuarantined(keys:)``) and
/// the record takes its place. Nothing is lost (the record holds every byte of the entry) and nothing counts
/// twice in `status`. Content overwritten under the same path keeps its quarantined records: its bytes differ.
public struct QuarantinedTail: Sendable, Hashable {
    /// The quarantine key (``QuarantineEntry/key``).
    public var key: String
    public var provenance: Provenance
    /// The record's bytes as read.
    public var raw: [UInt8]

    public init(key: String, provenance: Provenance, raw: [UInt8]) {
        self.key = key
        self.provenance = provenance
        self.raw = raw
    }

    /// Whether `record` is this entry's line completed: read from the same place, longer, starting with its bytes.
    public func isCompleted(by record: RawRecord) -> Bool {
        record.provenance == provenance && record.bytes.count > raw.count && record.bytes.starts(with: raw)
    }
}
