import Ingest

/// A quarantined record of a plain file whose JSON was malformed, with the version of the file it was read from
/// (the manifest's size and SHA-256): possibly the last line, cut because the file was still being written when
/// it was read (a log appended to by another process).
///
/// An ingest that reads the file again forgets the entry when the file now begins with every byte of that
/// version, that version ended with the entry's bytes, and the same line now holds a longer record: the line was
/// completed since (``LedgerStore/forgetQuarantined(keys:)``), and the record takes its place. Nothing is lost
/// (the record holds every byte of the entry) and nothing counts twice in `status`. Content rewritten under the
/// same path keeps its quarantined records.
public struct QuarantinedTail: Sendable, Hashable {
    /// The quarantine key (``QuarantineEntry/key``).
    public var key: String
    /// The file (as the manifest names it) and line.
    public var provenance: Provenance
    /// The record's bytes as read, compressed.
    public var payload: CompressedPayload
    /// The version of the file the manifest holds: the one last read.
    public var lastRead: FileFingerprint

    public init(key: String, provenance: Provenance, payload: CompressedPayload, lastRead: FileFingerprint) {
        self.key = key
        self.provenance = provenance
        self.payload = payload
        self.lastRead = lastRead
    }
}
