import Facts
import Ingest
import Ledger

/// `subledger reprocess`: rebuilds facts from the payloads the ledger keeps, with today's rules and the given
/// verification options; no archive is read, except the archives of records a release before payloads were kept
/// wrote (read again from their recorded paths when the bytes there are unchanged).
///
/// ``ReprocessScope/full`` rebuilds every fact and retries every quarantined record; ``ReprocessScope/quarantined``
/// only retries quarantined records (after fixing `--apple-root-ca`, `--bundle-id`, `--package-name`), unless the
/// ledger's facts are stale, which makes it a full one. Killed at any point, a re-run finishes the work: records
/// leave the ledger's queue in the transaction that writes their new outcome.
public struct ReprocessJob {
    public var ledger: LedgerLocation
    /// Reads the stored records (it holds the run's plausible times).
    public var parser: RecordParser
    public var translator: RecordTranslator
    public var progress: ProgressOutput
    /// How long to wait for another writer of the same ledger before giving up.
    public var lockTimeout: Duration

    public init(ledger: LedgerLocation, parser: RecordParser, translator: RecordTranslator,
                progress: ProgressOutput = .none, lockTimeout: Duration = .seconds(60)) {
        self.ledger = ledger
        self.parser = parser
        self.translator = translator
        self.progress = progress
        self.lockTimeout = lockTimeout
    }

    /// Reprocesses what `scope` covers (see the type's documentation).
    public func run(_ scope: ReprocessScope) throws(IngestError) -> ReprocessOutcome {
        let session = try WriterSession(location: ledger, mode: .exclusive, timeout: lockTimeout)
        defer { session.lock.release() }
        let effective: ReprocessScope = session.isStale ? .full : scope
        if effective != scope {
            progress.say("the ledger's facts were made by older rules: reprocessing everything, not only the quarantine")
        }
        return try IngestError.wrap { () throws(LedgerError) in
            try session.reprocess(effective, parser: parser, translator: translator, progress: progress)
        }
    }
}

/// What a reprocess did.
public struct ReprocessOutcome: Sendable {
    public var scope: ReprocessScope
    /// The records translated again from their stored payloads: `read` of them, and where each ended.
    public var records: FileCounts
    /// Of those, quarantined records that are now used, excluded or a duplicate.
    public var released: Int
    /// The manifest files read again (records without a stored payload).
    public var reread: IngestStatistics
    /// Manifest files that could not be read again: their records are not in the ledger until they are ingested.
    public var unreadable: [UnreadableFile]
}

/// A file the ledger knows that a reprocess could not read again.
public struct UnreadableFile: Sendable, Hashable {
    public var path: String
    public var reason: String
}
