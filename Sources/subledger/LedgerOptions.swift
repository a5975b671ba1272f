import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger

/// `--db`: the ledger database every command reads or writes.
struct LedgerOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp("The ledger database (SQLite).", valueName: "FILE"))
    var path = "subledger.sqlite"

    /// Opens the existing ledger for reading; a missing database is a usage error (exit 2). `checked`: run
    /// SQLite's quick check first (`report`, `run`), so that numbers are never taken from a damaged file (exit 3,
    /// with how to recover).
    func openForReading(checked: Bool = false) throws -> SQLiteLedger {
        do {
            let ledger = try SQLiteLedger(path: path, mode: .readOnly)
            if checked { try ledger.quickCheck() }
            return ledger
        } catch where error.kind == .notFound || error.kind == .corrupt {
            throw CommandFailure.usage(error.description)
        } catch {
            throw CommandFailure.couldNotFinish(error.description)
        }
    }
}

extension InputPath {
    /// The path the user typed. Swift's `CommandLine.arguments` decode each argument as UTF-8, replacing bytes
    /// that are not with U+FFFD, so a file name in another encoding would be "not found": such an argument is
    /// taken back from the process's raw `argv`.
    init(argument: String) {
        guard argument.unicodeScalars.contains("\u{FFFD}") else {
            self.init(argument)
            return
        }
        for index in 0..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: raw, count: strlen(raw)).map { UInt8(bitPattern: $0) }
            if String(decoding: bytes, as: UTF8.self) == argument {
                self.init(bytes: bytes)
                return
            }
        }
        self.init(argument)
    }
}

extension IngestStatistics {
    /// Whether the run must exit 1 (`cli.md`): some input was quarantined, damaged or skipped.
    var needsAttention: Bool {
        quarantined > 0 || !damagedFiles.isEmpty || !skippedFiles.isEmpty
    }

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

    private static func listing(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
