import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger

/// `--db`: the ledger database every command reads or writes.
struct LedgerOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp("The ledger database (SQLite).", valueName: "FILE"))
    var path = "subledger.sqlite"

    /// Opens the existing ledger for reading; a missing database is a usage error (exit 2).
    func openForReading() throws -> SQLiteLedger {
        do {
            return try SQLiteLedger(path: path, mode: .readOnly)
        } catch where error.kind == .notFound || error.kind == .corrupt {
            throw CommandFailure.usage(error.description)
        } catch {
            throw CommandFailure.couldNotFinish(error.description)
        }
    }
}

extension IngestStatistics {
    /// The human summary both `ingest` and `status` print on stderr.
    var summaryLines: [String] {
        var lines = ["records: \(read) read = \(used) used + \(duplicate) duplicate + \(excluded) excluded + \(quarantined) quarantined"]
        if !excludedByReason.isEmpty { lines.append("excluded: " + Self.listing(excludedByReason)) }
        if !quarantinedByReason.isEmpty {
            lines.append("quarantined: " + Self.listing(quarantinedByReason) + " (see `subledger quarantine`)")
        }
        for damage in damagedFiles {
            lines.append("damaged: \(damage.file) at byte \(damage.offset): \(damage.reason) (records before it were read)")
        }
        if let firstEventAt, let lastEventAt {
            lines.append("events: \(Timestamp.rfc3339(firstEventAt)) to \(Timestamp.rfc3339(lastEventAt))")
        }
        return lines
    }

    /// Exit 1 (cli.md): a record or a part of one was quarantined, or a file was damaged.
    var somethingQuarantinedOrDamaged: Bool {
        quarantined > 0 || self[.partsQuarantined] > 0 || !damagedFiles.isEmpty
    }

    /// Each non-zero warning in a sentence on stderr (cli.md), in ``IngestWarning`` order.
    func sayWarnings() {
        for warning in IngestWarning.allCases where self[warning] > 0 {
            FileHandle.standardError.write(Data((warning.sentence(self[warning]) + "\n").utf8))
        }
    }

    private static func listing(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
