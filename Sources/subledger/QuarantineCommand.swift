import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger

struct QuarantineCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "List or export the quarantined records.",
        discussion: """
        Lists each quarantined record with its file, archive member, position (line, or array index) and \
        reason on stdout; an unusable part of a record that was otherwise used (one transaction of a receipt, \
        one line item) is listed under its record's place with its path in the payload. --export writes them as \
        NDJSON instead: file, member, position, part (null for a whole record), reason, detail, the record's \
        bytes (`raw` as text when UTF-8, else `raw_base64`; only the first 4096 for records a release before \
        payloads were kept quarantined) and raw_size. \
        Reasons: \(QuarantineReason.allCases.map(\.rawValue).joined(separator: ", ")).

        Examples:
          subledger quarantine --db ledger.sqlite --reason bad_signature
          subledger quarantine --db ledger.sqlite --export quarantine.ndjson
        """)

    @OptionGroup var ledger: LedgerOptions

    @Option(help: ArgumentHelp("Only records quarantined for this reason.", valueName: "R"))
    var reason: String?

    @Option(help: ArgumentHelp("Write the records as NDJSON to this file.", valueName: "FILE"))
    var export: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let reason, QuarantineReason(rawValue: reason) == nil {
            throw ValidationError("unknown reason \(reason); one of \(QuarantineReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        let store = try ledger.openForReading()
        // The listing reads the quarantine table only, which a damaged file may leave readable: checked first,
        // as a report checks, so that a damaged ledger is exit 2 here too and not a listing that looks whole.
        do { try store.quickCheck() } catch { throw CommandFailure.ledger(error) }
        var output: FileHandle = .standardOutput
        // An export is written to a hidden file beside it and renamed into place once complete, so that a
        // failure (exit 3) leaves no half-written export (cli.md).
        let temporary = export.map { path -> String in
            let file = InputPath(path)
            return file.folder.description + "/." + String(decoding: file.lastComponent, as: UTF8.self) + ".partial"
        }
        if let temporary, let export {
            guard FileManager.default.createFile(atPath: temporary, contents: nil),
                  let handle = FileHandle(forWritingAtPath: temporary) else {
                throw CommandFailure.usage("--export \(export): cannot create a file in its folder")
            }
            output = handle
        }
        var buffer: [UInt8] = []
        var count = 0
        var parts = 0
        do {
            try store.forEachQuarantined(reason: reason) { entry in
                if entry.part == nil { count += 1 } else { parts += 1 }
                if export != nil {
                    buffer += Array(JSONWriter.compact(.object(Self.exportObject(entry))).utf8)
                } else {
                    let place = entry.part.map { "\(entry.provenance) \($0)" } ?? "\(entry.provenance)"
                    buffer += Array("\(place)\t\(entry.reason)\t\(entry.detail)".utf8)
                }
                buffer.append(UInt8(ascii: "\n"))
                if buffer.count >= 1 << 16 {
                    try output.write(contentsOf: buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try output.write(contentsOf: buffer)
            if let temporary, let export {
                try output.close()
                guard rename(temporary, export) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
        } catch {
            if let temporary { try? FileManager.default.removeItem(atPath: temporary) }
            if let error = error as? LedgerError { throw CommandFailure.ledger(error) }
            let code = CommandFailure.posixCode(of: error) ?? EIO
            throw CommandFailure.file("cannot write the export \(export ?? "to stdout"): \(String(cString: strerror(code)))",
                                      code: code, advice: "give --export a file in a writable folder")
        }
        let destination = export.map { " written to \($0)" } ?? ""
        let partsText = parts > 0 ? " and \(parts) quarantined parts of used records" : ""
        logger.notice("\(count) quarantined records\(partsText)\(destination)",
                      metadata: ["records": "\(count)", "parts": "\(parts)"])
    }

    static func exportObject(_ entry: QuarantinedRecord) -> JSONObject {
        var object = JSONObject()
        object.append("file", .string(entry.provenance.file))
        object.append("member", entry.provenance.member.map { .string($0) } ?? .null)
        object.append("position", .number(String(entry.provenance.position)))
        object.append("part", entry.part.map { .string($0) } ?? .null)
        object.append("reason", .string(entry.reason))
        object.append("detail", .string(entry.detail))
        if let text = String(validating: entry.raw, as: UTF8.self) {
            object.append("raw", .string(text))
        } else {
            object.append("raw_base64", .string(Data(entry.raw).base64EncodedString()))
        }
        object.append("raw_size", .number(String(entry.rawSize)))
        return object
    }
}
