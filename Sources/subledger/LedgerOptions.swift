import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger
import Logging

/// `--db`: the ledger every command reads or writes.
struct LedgerOptions: ParsableArguments {
    @Option(name: .customLong("db"),
            help: ArgumentHelp("The ledger: an SQLite file, or a postgres:// URL (password from the URL or $PGPASSWORD). Default: $SUBLEDGER_DB, else subledger.sqlite.", valueName: "FILE|URL"))
    var database: String?

    /// What `--db` names, else `$SUBLEDGER_DB`, else `subledger.sqlite`.
    var path: String { database ?? ProcessInfo.processInfo.environment["SUBLEDGER_DB"] ?? "subledger.sqlite" }

    var location: LedgerLocation { LedgerLocation(path, environment: ProcessInfo.processInfo.environment) }

    /// A folder is no ledger file (SQLite would say "disk I/O error" or "unable to open database file").
    func validate() throws {
        var isDirectory: ObjCBool = false
        if case .sqlite(let file) = location, FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory),
           isDirectory.boolValue {
            throw ValidationError("--db \(file) is a folder: give the ledger's file, e.g. \(file)/subledger.sqlite")
        }
    }

    /// Opens the existing ledger read-only; a missing, foreign or not yet upgraded ledger is a usage error
    /// (exit 2) saying what to do. Reports check it themselves (`ReportJob`), so that numbers are never taken
    /// from a damaged ledger (exit 2, with how to recover).
    func openForReading() throws -> any LedgerStore {
        do {
            return try location.open(.readOnly)
        } catch {
            throw CommandFailure.ledger(error)
        }
    }

    /// Checks that the ledger exists, for a command that rebuilds one but never creates it (`reprocess`): a
    /// missing, empty or foreign ledger is a usage error (exit 2), as for the commands that read; one that
    /// needs upgrading is what such a command is for.
    func requireExisting() throws {
        do {
            _ = try location.open(.readOnly)
        } catch where error.kind == .needsReprocess {
            return
        } catch {
            throw CommandFailure.ledger(error)
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

    /// Exit 1 (cli.md): a record or a part of one was quarantined, a file was damaged, or a file found among
    /// the inputs is not one.
    var needsAttention: Bool {
        quarantined > 0 || self[.partsQuarantined] > 0 || !damagedFiles.isEmpty || !skippedFiles.isEmpty
    }

    /// Each non-zero warning in a sentence on stderr (cli.md), in ``IngestWarning`` order: a `warning` record of
    /// `logger`, so logfmt in a log like every other line there.
    func sayWarnings(to logger: Logger) {
        for warning in IngestWarning.allCases where self[warning] > 0 {
            logger.warning("\(warning.sentence(self[warning]))",
                           metadata: ["warning": "\(warning.rawValue)", "count": "\(self[warning])"])
        }
    }

    private static func listing(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}

extension PlausibleTimes {
    /// The window of this run: its clock read once, so that every time a record states is checked against the
    /// same instant.
    static func ofThisRun() -> PlausibleTimes {
        PlausibleTimes(now: Millis((Date().timeIntervalSince1970 * 1000).rounded()))
    }
}
