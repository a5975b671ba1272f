import Facts
import Foundation
import Ingest
import Ledger

/// `subledger ingest`: reads input files into the ledger, each record ending in exactly one place (used,
/// duplicate, excluded or quarantined); see ``RecordPipeline`` for the stages.
///
/// When the ledger's facts were made by older rules (or a reprocess was interrupted), the run reprocesses them
/// first, with this run's translator, so that the ledger never mixes facts of two rule versions (cli.md).
/// Only one writer works on a ledger at a time (``LedgerStore/lockForWriting(_:timeout:)``); a second one waits up
/// to ``lockTimeout``.
public struct IngestJob {
    public var ledger: LedgerLocation
    /// Reads raw records (it holds the run's plausible times).
    public var parser: RecordParser
    public var translator: RecordTranslator
    public var progress: ProgressOutput
    /// How long to wait for another writer of the same ledger before giving up.
    public var lockTimeout: Duration

    /// A job writing into `ledger` (created when missing); `lockTimeout` is how long it waits for another writer
    /// of the same ledger to finish before giving up with ``IngestError/busy``.
    public init(ledger: LedgerLocation, parser: RecordParser, translator: RecordTranslator,
                progress: ProgressOutput = .none, lockTimeout: Duration = .seconds(60)) {
        self.ledger = ledger
        self.parser = parser
        self.translator = translator
        self.progress = progress
        self.lockTimeout = lockTimeout
    }

    /// Ingests `inputs` (files, folders, globs) and returns what this run did. Where this run's records ended is
    /// classified as `status` classifies them once the run is done (``LedgerStore/recordOutcomes(run:)``: a record
    /// of a token the run found to be a test purchase is excluded, even when it came first); the warnings are what
    /// the run added to the ledger's (``LedgerStore/warnings()``), so that one run into a new ledger reports
    /// exactly what `status` reports afterwards.
    /// Files that are not inputs (``InputExpander``, ``ArchiveReader/recognise(_:)``) are in the statistics'
    /// `skippedFiles`, and the ledger keeps them for `status`.
    public func run(inputs: [InputPath]) throws(IngestError) -> IngestOutcome {
        let expansion: InputExpander.Expansion
        do {
            expansion = try InputExpander.expand(inputs)
        } catch {
            throw .input(error.description)
        }
        let files = expansion.files
        let sample = files.map(\.description)
        var session = try WriterSession(location: ledger, mode: .shared, timeout: lockTimeout)
        defer { session.lock.release() }
        if session.isStale { try session.lockExclusively() }
        return try IngestError.wrap { [session] () throws(LedgerError) -> IngestOutcome in
            var outcome = IngestOutcome()
            if session.isStale {
                progress.say("the ledger's facts were made by older rules (or a reprocess was interrupted): reprocessing them first")
                outcome.reprocess = try session.reprocess(.full, parser: parser, translator: translator,
                                                          progress: progress, sampleFiles: sample)
            }
            let store = session.store
            var pipeline = RecordPipeline(parser: parser, translator: translator, rulesVersion: RulesVersion.current,
                                          dictionaries: try session.dictionaries(sampling: sample), progress: progress)
            pipeline.quarantinedTails = try store.quarantinedTails()
            let before = try store.warningCounts()
            for skipped in expansion.skipped { try store.skipFile(skipped) }
            let tally = try pipeline.run([.inputs(files, claimer: try store.fileClaimer())], into: store)
            outcome.statistics = tally.statistics
            outcome.statistics.skippedFiles = expansion.skipped + tally.statistics.skippedFiles
            let outcomes = try store.recordOutcomes(run: pipeline.run)
            outcome.statistics.used = outcomes.used
            outcome.statistics.excluded = outcomes.excluded
            outcome.statistics.excludedByReason = outcomes.excludedByReason
            // What this run added to the ledger's warnings (its totals are `status`'s), read through indexes, so
            // that a nightly ingest never scans the whole ledger: records that now have `received_at` in seconds
            // (a copy in seconds of a record stored before counts too), this run's message-id conflicts, and the
            // parts quarantined since it began.
            let after = try store.warningCounts()
            outcome.statistics.warnings = IngestWarning.counts(
                timestampsInSeconds: after.receivedInSeconds - before.receivedInSeconds,
                messageIdConflicts: outcomes.messageIdConflicts,
                partsQuarantined: after.partsQuarantined - before.partsQuarantined)
            outcome.unchanged = tally.unchanged
            let copies = tally.copies.map { FileCopy(path: $0.path, original: $0.of) }
            if !copies.isEmpty {
                // A copy of a file that held no records (an empty archive, the same bytes on every empty day)
                // would give nothing if read: it is no input skipped, only a file with nothing in it.
                let empty = Set(try store.files().filter { $0.state == .done && $0.counts.read == 0 && $0.damage == nil }
                    .map(\.fingerprint.path))
                outcome.copies = copies.filter { !empty.contains($0.original) }
                outcome.copiesOfEmptyFiles = copies.filter { empty.contains($0.original) }
            }
            return outcome
        }
    }
}

extension IngestJob {
    /// ``run(inputs:)`` of paths given as text.
    public func run(inputs: [String]) throws(IngestError) -> IngestOutcome {
        try run(inputs: inputs.map(InputPath.init))
    }
}

/// What one `ingest` run did.
public struct IngestOutcome: Sendable {
    /// The records of the files this run read, as `ingest --json` counts them.
    public var statistics = IngestStatistics()
    /// Files skipped because the ledger has them, unchanged, at the same path.
    public var unchanged: [String] = []
    /// Files not read because the same bytes were read under another path.
    public var copies: [FileCopy] = []
    /// Files not read because the same bytes were read under another path and held no records (an empty
    /// archive of each empty day): nothing was skipped.
    public var copiesOfEmptyFiles: [FileCopy] = []
    /// The reprocess the run did first, when the ledger's facts were made by older rules.
    public var reprocess: ReprocessOutcome?

    public init() {}
}

/// An input file whose bytes (SHA-256) the ledger read under another path.
public struct FileCopy: Sendable, Hashable {
    public var path: String
    /// The path the same bytes were read under.
    public var original: String
}

extension IngestError {
    /// Runs `body`, a ledger's work, as an ingest's: its errors become ``IngestError/ledger(_:)``.
    static func wrap<T>(_ body: () throws(LedgerError) -> T) throws(IngestError) -> T {
        do {
            return try body()
        } catch {
            throw .ledger(error)
        }
    }
}
