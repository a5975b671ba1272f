import Crypto
import Facts
import Foundation
import Ingest

/// The half of the ledger both engines share: every read, the manifest, the rules version and the reprocess
/// queue, in ``LedgerSchema``'s statements.
extension SQLLedger {
    // MARK: standing

    public func standing(rulesVersion: Int64) throws(LedgerError) -> LedgerStanding {
        let pending = LedgerMigrations.needingAWriter(try pendingMigrations())
        guard pending.isEmpty else {
            return LedgerStanding(ledgerId: "", rulesVersion: nil, reprocess: nil, pendingMigrations: pending,
                                  recordsWithoutPayload: true, isEmpty: false)
        }
        return LedgerStanding(
            ledgerId: try meta("ledger_id") ?? "", rulesVersion: try meta("rules_version").flatMap { Int64($0) },
            reprocess: try meta("reprocess").flatMap(ReprocessScope.init(rawValue:)), pendingMigrations: [],
            recordsWithoutPayload: try exists(LedgerSchema.anyRecordWithoutPayload),
            isEmpty: !(try exists(LedgerSchema.anyRecord)))
    }

    func meta(_ key: String) throws(LedgerError) -> String? {
        try strings(LedgerSchema.metaValue, [.text(key)]).first
    }

    func setMeta(_ key: String, _ value: String?) throws(LedgerError) {
        if let value {
            try execute(LedgerSchema.setMeta, [.text(key), .text(value)])
        } else {
            try execute(LedgerSchema.deleteMeta, [.text(key)])
        }
    }

    public func setRulesVersion(_ rulesVersion: Int64) throws(LedgerError) {
        try setMeta("rules_version", String(rulesVersion))
    }

    // MARK: payload dictionaries

    public func payloadDictionaries() throws(LedgerError) -> [PayloadDictionary] {
        var dictionaries: [PayloadDictionary] = []
        try eachRow(LedgerSchema.listDictionaries, []) { row throws(LedgerError) in
            dictionaries.append(PayloadDictionary(id: try row.requiredInteger(0), bytes: try row.bytes(1) ?? []))
        }
        return dictionaries
    }

    public func addPayloadDictionary(_ bytes: [UInt8]) throws(LedgerError) -> PayloadDictionary {
        try execute(LedgerSchema.insertDictionary, [.bytes(bytes), .integer(LedgerClock.now())])
        guard let last = try payloadDictionaries().last else {
            throw LedgerError(kind: .corrupt, path: location, message: "a payload dictionary was stored and not found")
        }
        return last
    }

    // MARK: file manifest

    public func beginFile(_ file: FileFingerprint) throws(LedgerError) {
        try execute(LedgerSchema.beginFile, [.text(file.path), .integer(file.size), .text(file.sha256),
                                             .integer(LedgerClock.now())])
        try execute(LedgerSchema.unskipFile, [.text(file.path)])
    }

    public func skipFile(_ skipped: IngestStatistics.Skipped) throws(LedgerError) {
        try execute(LedgerSchema.skipFile, [.text(skipped.file), .text(skipped.reason), .integer(LedgerClock.now())])
    }

    public func saveProgress(path: String, read: Int) throws(LedgerError) {
        try execute(LedgerSchema.fileProgress, [.integer(Int64(read)), .integer(Int64(read)), .text(path)])
    }

    public func finishFile(_ file: FileFingerprint, counts: FileCounts, damage: Damage?) throws(LedgerError) {
        try execute(LedgerSchema.finishFile, [
            .integer(Int64(counts.read)), .integer(Int64(counts.used)), .integer(Int64(counts.duplicate)),
            .integer(Int64(counts.excluded)), .integer(Int64(counts.quarantined)), .integer(damage?.offset),
            .text(damage?.reason), .integer(LedgerClock.now()), .text(file.path),
        ])
    }

    public func markUnreadable(path: String, reason: String) throws(LedgerError) {
        try execute(LedgerSchema.markUnreadable, [.text(reason), .text(path)])
    }

    public func files() throws(LedgerError) -> [FileManifestEntry] {
        var entries: [FileManifestEntry] = []
        try eachRow(LedgerSchema.listFiles, []) { row throws(LedgerError) in
            let path = try row.requiredText(0)
            guard let state = FileManifestEntry.State(rawValue: try row.requiredText(3)) else {
                throw LedgerError(kind: .corrupt, path: location, message: "file \(path) has an unknown state")
            }
            let counts = FileCounts(read: Int(try row.requiredInteger(4)), used: Int(try row.requiredInteger(5)),
                                    duplicate: Int(try row.requiredInteger(6)), excluded: Int(try row.requiredInteger(7)),
                                    quarantined: Int(try row.requiredInteger(8)))
            let damage = try row.integer(9).map { offset throws(LedgerError) in
                Damage(file: path, offset: offset, reason: try row.text(10) ?? "")
            }
            entries.append(FileManifestEntry(
                fingerprint: FileFingerprint(path: path, size: try row.requiredInteger(1), sha256: try row.requiredText(2)),
                state: state, counts: counts, damage: damage, ingestedAt: try row.requiredInteger(11)))
        }
        return entries
    }

    public func filesToReread() throws(LedgerError) -> [FileFingerprint] {
        var files: [FileFingerprint] = []
        try eachRow(LedgerSchema.filesToReread, []) { row throws(LedgerError) in
            files.append(FileFingerprint(path: try row.requiredText(0), size: try row.requiredInteger(1),
                                         sha256: try row.requiredText(2)))
        }
        return files
    }

    // MARK: reprocess

    public func queueForReprocess(_ scope: ReprocessScope) throws(LedgerError) -> [String] {
        try inOwnTransaction { () throws(LedgerError) -> [String] in
            let underWay = try meta("reprocess").flatMap(ReprocessScope.init(rawValue:))
            var reread: [String] = []
            if underWay == nil {
                try execute(LedgerSchema.queueQuarantine, [])
                try execute(LedgerSchema.deleteQueuedQuarantine, [])
            }
            if scope == .full && underWay != .full {
                // Records without a payload cannot be translated again: their files are read again instead.
                reread += try strings(LedgerSchema.payloadlessRecordFiles)
                try execute(LedgerSchema.deletePayloadlessRecords, [])
                try queueStoredRecords()
                try execute(LedgerSchema.deleteFacts, [])
                try execute(LedgerSchema.deleteParts, [])
                // Quarantined rows cut at 4096 bytes cannot be tried again either: read again, their files
                // quarantine them anew, whole.
                reread += try strings(LedgerSchema.legacyQuarantineFiles)
                try execute(LedgerSchema.deleteLegacyQuarantine, [])
            }
            let files = Array(Set(reread)).sorted()
            for file in files { try execute(LedgerSchema.setFileReading, [.text(file)]) }
            let effective: ReprocessScope = underWay == .full || scope == .full ? .full : .quarantined
            try setMeta("reprocess", effective.rawValue)
            if effective == .full { try setMeta("rules_version", nil) }
            return files
        }
    }

    public func finishReprocess(rulesVersion: Int64) throws(LedgerError) {
        try inOwnTransaction { () throws(LedgerError) in
            guard try !anyQueued() else {
                throw LedgerError(kind: .corrupt, path: location, message: "a reprocess ended with records still queued")
            }
            try setMeta("reprocess", nil)
            try setMeta("rules_version", String(rulesVersion))
        }
    }

    // MARK: statistics

    /// Everything ingested so far.
    ///
    /// - `files`: manifest rows; `read`: Σ of each file's latest read.
    /// - `used` / `excluded`: rows of `records` by outcome (``recordOutcomes(run:)``: a record about a test
    ///   purchase's token counts as excluded `test`); `quarantined`: whole records in `quarantine`.
    /// - `duplicate = read - used - excluded - quarantined`. This is exact because every stored row was created
    ///   by exactly one record read, and every other record read found its row already there, i.e. was a
    ///   duplicate. It holds as long as files only grow (archives are appended to or left alone): each row's
    ///   record is then still inside the latest read of some file. A file rewritten with records removed leaves
    ///   rows that no latest read counts, and duplicates are undercounted (never below 0: clamped).
    /// - `warnings`: every ``IngestWarning``, by raw value: seconds from the records' flags, conflicts from the
    ///   Pub/Sub keys, parts from the quarantine. Derived from what the ledger stores, so equal for any order of
    ///   the same inputs and unchanged by a re-run.
    public func statistics(readingEventRange: Bool) throws(LedgerError) -> IngestStatistics {
        var statistics = IngestStatistics()
        try eachRow(LedgerSchema.fileTotals, []) { row throws(LedgerError) in
            statistics.files = Int(try row.integer(0) ?? 0)
            statistics.read = Int(try row.integer(1) ?? 0)
        }
        let outcomes = try recordOutcomes(run: nil)
        statistics.used = outcomes.used
        statistics.excluded = outcomes.excluded
        statistics.excludedByReason = outcomes.excludedByReason
        let quarantine = try quarantineCounts()
        statistics.quarantined = quarantine.records.values.reduce(0, +)
        statistics.quarantinedByReason = quarantine.records
        statistics.duplicate = max(0, statistics.read - statistics.used - statistics.excluded - statistics.quarantined)
        statistics.read = statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined
        try eachRow(LedgerSchema.damagedFiles, []) { row throws(LedgerError) in
            statistics.damagedFiles.append(IngestStatistics.Damaged(
                file: try row.requiredText(0), offset: try row.requiredInteger(1), reason: try row.text(2) ?? ""))
        }
        try eachRow(LedgerSchema.listSkipped, []) { row throws(LedgerError) in
            statistics.skippedFiles.append(IngestStatistics.Skipped(file: try row.requiredText(0),
                                                                    reason: try row.requiredText(1)))
        }
        if readingEventRange { (statistics.firstEventAt, statistics.lastEventAt) = try eventRange() }
        statistics.warnings = IngestWarning.counts(timestampsInSeconds: outcomes.receivedInSeconds,
                                                   messageIdConflicts: outcomes.messageIdConflicts,
                                                   partsQuarantined: quarantine.parts)
        return statistics
    }

    /// The earliest `at` and latest `observed_at` of the facts inside ``PlausibleTimes/representable``.
    public func eventRange() throws(LedgerError) -> (first: Millis?, last: Millis?) {
        var range: (first: Millis?, last: Millis?) = (nil, nil)
        let window = PlausibleTimes.representable
        try eachRow(LedgerSchema.eventRange, [.integer(window.earliest), .integer(window.latest)]) { row throws(LedgerError) in
            range = (try row.integer(0), try row.integer(1))
        }
        return range
    }

    public func recordOutcomes(run: String?) throws(LedgerError) -> RecordOutcomes {
        var outcomes = try outcomeCounts(run: run)
        let conflicts: (sql: String, values: [SQLValue]) = run.map {
            (LedgerSchema.runMessageIdConflicts(messagesOnly: searchesConflictsInMessageKeysOnly), [.text($0)])
        } ?? (LedgerSchema.messageIdConflicts, [])
        try eachRow(conflicts.sql, conflicts.values) { row throws(LedgerError) in
            outcomes.messageIdConflicts = Int(try row.integer(0) ?? 0)
        }
        return outcomes
    }

    /// The outcome counts of a query grouped as ``LedgerSchema/recordOutcomes`` is: source, outcome, reason,
    /// whether the subject is a test purchase's, count, and how many had `received_at` in seconds.
    func groupedOutcomes(_ sql: String, _ values: [SQLValue]) throws(LedgerError) -> RecordOutcomes {
        var outcomes = RecordOutcomes()
        try eachRow(sql, values) { row throws(LedgerError) in
            var reason: String? = try row.text(1) == "used" ? nil : try row.text(2)
            if try row.requiredInteger(3) != 0, reason == nil { reason = ExclusionReason.test.rawValue }
            outcomes.add(source: try row.requiredText(0), excludedFor: reason, count: Int(try row.requiredInteger(4)))
            outcomes.receivedInSeconds += Int(try row.integer(5) ?? 0)
        }
        return outcomes
    }

    public func warningCounts() throws(LedgerError) -> (receivedInSeconds: Int, partsQuarantined: Int) {
        var counts = (receivedInSeconds: 0, partsQuarantined: 0)
        try eachRow(LedgerSchema.warningCounts, []) { row throws(LedgerError) in
            counts = (Int(try row.integer(0) ?? 0), Int(try row.integer(1) ?? 0))
        }
        return counts
    }

    /// Whole quarantined records by reason, and the number of parts of used records.
    private func quarantineCounts() throws(LedgerError) -> (records: [String: Int], parts: Int) {
        var records: [String: Int] = [:]
        var parts = 0
        try eachRow(LedgerSchema.quarantineByReason, []) { row throws(LedgerError) in
            let count = Int(try row.requiredInteger(2))
            if try row.requiredInteger(0) != 0 { parts += count } else { records[try row.requiredText(1), default: 0] += count }
        }
        return (records, parts)
    }

    public func countsBySource() throws(LedgerError) -> [SourceCount] {
        try recordOutcomes(run: nil).bySource
    }

    public func forEachQuarantined(reason: String?, _ body: (QuarantinedRecord) throws -> Void) throws {
        let decompressor = PayloadDecompressor(dictionaries: try payloadDictionaries())
        var failure: (any Error)?
        try eachRow(LedgerSchema.listQuarantine, [.text(reason), .text(reason)]) { row throws(LedgerError) in
            guard failure == nil else { return }
            let member = try row.requiredText(3)
            let provenance = Provenance(file: try row.requiredText(2), member: member.isEmpty ? nil : member,
                                        position: try row.requiredInteger(4))
            let stored = try row.bytes(5) ?? []
            // No dictionary column: a row of the release before payloads were kept, its first 4096 bytes as read.
            let raw = try row.integer(7).map { dictionary throws(LedgerError) -> [UInt8] in
                guard let bytes = decompressor.decompress(stored, dictionaryId: dictionary) else {
                    throw LedgerError(kind: .corrupt, path: location, message: "the quarantined record at \(provenance) does not decompress")
                }
                return bytes
            } ?? stored
            do {
                let part = try row.text(8) ?? ""
            try body(QuarantinedRecord(reason: try row.requiredText(0), detail: try row.requiredText(1),
                                           provenance: provenance, raw: raw, rawSize: Int(try row.requiredInteger(6)),
                                           part: part.isEmpty ? nil : part))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    public func quarantinedTails() throws(LedgerError) -> [QuarantinedTail] {
        var tails: [QuarantinedTail] = []
        try eachRow(LedgerSchema.quarantinedTails, []) { row throws(LedgerError) in
            let file = try row.requiredText(1)
            tails.append(QuarantinedTail(
                key: try row.requiredText(0), provenance: Provenance(file: file, position: try row.requiredInteger(2)),
                payload: CompressedPayload(bytes: try row.bytes(3) ?? [], dictionaryId: try row.requiredInteger(4)),
                lastRead: FileFingerprint(path: file, size: try row.requiredInteger(5), sha256: try row.requiredText(6))))
        }
        return tails
    }

    public func forgetQuarantined(keys: [String]) throws(LedgerError) {
        for key in keys {
            try execute(LedgerSchema.forgetQuarantined, [.text(key)])
            try execute(LedgerSchema.dequeueQuarantined, [.text(key)])
        }
    }

    /// Hex SHA-256 of the ledger's logical content (see ``LedgerStore/contentDigest()``): the same content gives
    /// the same digest in either engine.
    public func contentDigest() throws(LedgerError) -> String {
        typealias Column = DigestColumn
        var hasher = SHA256()
        var encoder = DigestEncoder()
        let tables: [(sql: String, columns: [Column])] = [
            (LedgerSchema.digestRecords, [.text, .text, .text, .text, .text, .text, .integer, .integer, .integer, .text,
                                          .integer]),
            (LedgerSchema.digestFacts, [.blob, .integer, .text]),
            (LedgerSchema.digestQuarantine, [.text, .text, .text, .text, .text, .integer, .text]),
        ]
        for (table, (sql, columns)) in tables.enumerated() {
            encoder.reset()
            encoder.append(Int64(table))
            hasher.update(data: encoder.bytes)
            try eachRow(sql, []) { row throws(LedgerError) in
                encoder.reset()
                for (column, kind) in columns.enumerated() {
                    switch kind {
                    case .text: encoder.append(try row.text(column))
                    case .integer: encoder.append(try row.integer(column))
                    case .blob: encoder.append(bytes: try row.bytes(column) ?? [])
                    }
                }
                hasher.update(data: encoder.bytes)
            }
        }
        return hasher.finalize().hexString
    }

    // MARK: provenance

    public func records(matching reference: String) throws(LedgerError) -> [RecordDetail] {
        let decompressor = PayloadDecompressor(dictionaries: try payloadDictionaries())
        let isKey = ["sha256:", "msg:", "uuid:"].contains { reference.hasPrefix($0) }
        let (sql, values): (String, [SQLValue])
        if !isKey, let place = Provenance(reference: reference) {
            (sql, values) = (LedgerSchema.recordsAt, [.text(place.file), .text(place.member ?? ""), .integer(place.position)])
        } else {
            (sql, values) = (LedgerSchema.recordByKey, [.text(reference)])
        }
        var details: [RecordDetail] = []
        try eachRow(sql, values) { row throws(LedgerError) in
            let member = try row.requiredText(5)
            let dictionaryId = try row.integer(9) ?? 0
            let raw = try row.bytes(8).flatMap { decompressor.decompress($0, dictionaryId: dictionaryId) }
            details.append(RecordDetail(
                dedupKey: try row.requiredText(0), source: try row.requiredText(1), outcome: try row.requiredText(2),
                reason: try row.text(3),
                provenance: Provenance(file: try row.requiredText(4), member: member.isEmpty ? nil : member,
                                       position: try row.requiredInteger(6)),
                receivedAt: try row.integer(7), rulesVersion: try row.requiredInteger(10), raw: raw, facts: []))
        }
        for index in details.indices {
            details[index].facts = try attributedFacts(LedgerSchema.factsOfRecord, [.text(details[index].dedupKey)]).map(\.fact)
        }
        return details
    }

    public func facts(ofSubject subject: String) throws(LedgerError) -> [AttributedFact] {
        try attributedFacts(LedgerSchema.factsOfSubject, [
            .integer(Int64(LedgerBucket.of(platform: Platform.apple.rawValue, subject: subject))),
            .integer(Int64(LedgerBucket.of(platform: Platform.google.rawValue, subject: subject))), .text(subject),
        ])
    }

    private func attributedFacts(_ sql: String, _ values: [SQLValue]) throws(LedgerError) -> [AttributedFact] {
        var facts: [AttributedFact] = []
        try eachRow(sql, values) { row throws(LedgerError) in
            facts.append(AttributedFact(fact: try fact(row, platform: 0, subject: 1, from: 2), record: try row.text(12)))
        }
        return facts
    }

    /// A fact from a row: `platform` and `subject` at those columns, `kind` through `flags` from column `first` on
    /// (kind, at, observed_at, ref, detail, product_id, end_at, amount_micros, currency, flags).
    func fact(_ row: any SQLRow, platform: Int, subject: Int, from first: Int) throws(LedgerError) -> Fact {
        let name = try row.requiredText(platform)
        guard let platformValue = Platform(rawValue: name) else {
            throw LedgerError(kind: .corrupt, path: location, message: "a fact has the unknown platform \(name)")
        }
        return Fact(
            platform: platformValue, subject: try row.requiredText(subject),
            kind: Fact.Kind(rawValue: try row.requiredText(first)), at: try row.requiredInteger(first + 1),
            observedAt: try row.requiredInteger(first + 2), ref: try row.text(first + 3), detail: try row.text(first + 4),
            productId: try row.text(first + 5), end: try row.integer(first + 6), amountMicros: try row.integer(first + 7),
            currency: try row.text(first + 8), flags: Fact.Flags(rawValue: Int(try row.requiredInteger(first + 9))))
    }
}

/// How ``SQLLedger/contentDigest()`` reads a column.
enum DigestColumn { case text, integer, blob }

/// Wall-clock time for `ingested_at`, dictionaries and leases (ms, UTC): the only non-deterministic values the
/// ledger keeps, all out of the content digest.
enum LedgerClock {
    static func now() -> Millis { Millis((Date().timeIntervalSince1970 * 1000).rounded()) }
}
