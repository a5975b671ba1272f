import Ledger

/// Why an ingest (or a reprocess) could not run or finish. Per-record problems are never errors (they are quarantined) and
/// damaged containers are reported in the statistics; these are the conditions that stop the whole run.
public enum IngestError: Error, Sendable, CustomStringConvertible {
    /// An input path or glob matched nothing (a usage error: exit 2).
    case input(String)
    /// `--db` names a database that is not a ledger of this program (another database, or one written by a
    /// later release): refused, unchanged (exit 2).
    case configuration(LedgerError)
    /// Another writer holds the ledger's write lock (exit 3).
    case busy(LedgerError)
    /// The ledger database failed (disk full, corrupt file, ...); the work of the file in progress is rolled
    /// back and a re-run completes it (exit 3).
    case ledger(LedgerError)

    public var description: String {
        switch self {
        case .input(let message): message
        case .configuration(let error): error.description
        case .busy(let error): error.message
        case .ledger(let error): error.description
        }
    }
}
