import Facts

extension SQLiteLedger {
    /// ``LedgerSchema/recordOutcomes`` counted in one pass over the records (every record, or one run's) instead
    /// of grouped in SQL. SQLite groups by sorting every row, and the query probed `records_test_subjects` for
    /// every record: 0.86 s for the bench ledger's 267,654 records, 5.3 s for the 1.35 million at 5 x, time a
    /// report's side reads and the end of every ingest (its own run's counts) spent. Here the few groups are found
    /// by their bytes, and only a used record whose subject the ``TestSubjectFilter`` may hold is probed, so the
    /// counts stay exact and memory is the filter's, whatever the number of records or test purchases.
    func outcomeCounts(run: String?) throws(LedgerError) -> RecordOutcomes {
        var testSubjects = TestSubjectFilter(bitsLog2: testSubjectFilterBitsLog2)
        let subjects = try prepared(LedgerSchema.testSubjects)
        defer { subjects.reset() }
        while try subjects.step() {
            testSubjects.insert(platform: try required(subjects, 0), subject: try required(subjects, 1))
        }

        let probe = try prepared(LedgerSchema.isTestSubject)
        defer { probe.reset() }
        let rows = try prepared(run == nil ? LedgerSchema.outcomeRows : LedgerSchema.runOutcomeRows)
        defer { rows.reset() }
        if let run { try rows.bind(1, run) }
        var tally = OutcomeTally()
        while try rows.step() {
            let source = try required(rows, 0)
            let inSeconds = rows.int64(5) & 1 != 0
            guard try required(rows, 1).elementsEqual("used".utf8) else {
                let reason = rows.textBytes(2) ?? UnsafeRawBufferPointer(start: nil, count: 0)
                tally.add(source: source, excludedFor: reason, inSeconds: inSeconds)
                continue
            }
            // A used record counts as a test purchase's when its subject has a record excluded as `test`.
            var test = false
            if let platform = rows.textBytes(3), let subject = rows.textBytes(4),
               testSubjects.mayContain(platform: platform, subject: subject) {
                probe.reset()
                try probe.bind(1, text: platform)
                try probe.bind(2, text: subject)
                test = try probe.step()
            }
            if test {
                OutcomeTally.test.withUnsafeBytes { tally.add(source: source, excludedFor: $0, inSeconds: inSeconds) }
            } else {
                tally.add(source: source, excludedFor: nil, inSeconds: inSeconds)
            }
        }
        return tally.outcomes
    }

    /// The text of a `NOT NULL` column; NULL there means a damaged ledger.
    private func required(_ statement: SQLiteStatement, _ column: Int32) throws(LedgerError) -> UnsafeRawBufferPointer {
        guard let text = statement.textBytes(column) else {
            throw LedgerError(kind: .corrupt, path: path, message: "column \(column) of a record is NULL where the schema forbids it")
        }
        return text
    }
}

/// The records counted by one pass of ``SQLiteLedger/outcomeCounts(run:)``, by source and exclusion reason (`nil`:
/// used), each group found by its bytes as read: a dozen groups or so, and the rows of one file mostly share
/// theirs, so the last group found is tried first.
private struct OutcomeTally {
    /// The reason a test purchase's used records count under.
    static let test = Array(ExclusionReason.test.rawValue.utf8)

    private var groups: [(source: [UInt8], reason: [UInt8]?, count: Int, inSeconds: Int)] = []
    private var last = 0

    mutating func add(source: UnsafeRawBufferPointer, excludedFor reason: UnsafeRawBufferPointer?, inSeconds: Bool) {
        let index: Int
        if last < groups.count, Self.matches(groups[last], source, reason) {
            index = last
        } else if let found = groups.firstIndex(where: { Self.matches($0, source, reason) }) {
            index = found
        } else {
            groups.append((Array(source), reason.map { Array($0) }, 0, 0))
            index = groups.count - 1
        }
        groups[index].count += 1
        if inSeconds { groups[index].inSeconds += 1 }
        last = index
    }

    var outcomes: RecordOutcomes {
        var outcomes = RecordOutcomes()
        for group in groups {
            outcomes.add(source: String(decoding: group.source, as: UTF8.self),
                         excludedFor: group.reason.map { String(decoding: $0, as: UTF8.self) }, count: group.count)
            outcomes.receivedInSeconds += group.inSeconds
        }
        return outcomes
    }

    private static func matches(_ group: (source: [UInt8], reason: [UInt8]?, count: Int, inSeconds: Int),
                                _ source: UnsafeRawBufferPointer, _ reason: UnsafeRawBufferPointer?) -> Bool {
        guard group.source.elementsEqual(source) else { return false }
        switch (group.reason, reason) {
        case (nil, nil): return true
        case (let kept?, let read?): return kept.elementsEqual(read)
        default: return false
        }
    }
}
