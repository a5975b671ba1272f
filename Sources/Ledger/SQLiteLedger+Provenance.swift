import Facts
import Ingest

extension SQLiteLedger {
    public func records(matching reference: String) throws(LedgerError) -> [RecordDetail] {
        let decompressor = PayloadDecompressor(dictionaries: try payloadDictionaries())
        let statement: SQLiteStatement
        let isKey = ["sha256:", "msg:", "uuid:"].contains { reference.hasPrefix($0) }
        if !isKey, let place = Provenance(reference: reference) {
            statement = try connection.prepare(LedgerSchema.recordsAt)
            try statement.bind(1, place.file)
            try statement.bind(2, place.member ?? "")
            try statement.bind(3, place.position)
        } else {
            statement = try connection.prepare(LedgerSchema.recordByKey)
            try statement.bind(1, reference)
        }
        var details: [RecordDetail] = []
        while try statement.step() {
            let member = statement.string(5)
            let raw = statement.isNull(8) ? nil
                : decompressor.decompress(statement.blob(8), dictionaryId: statement.optionalInt64(9) ?? 0)
            details.append(RecordDetail(
                dedupKey: statement.string(0), source: statement.string(1), outcome: statement.string(2),
                reason: statement.optionalString(3),
                provenance: Provenance(file: statement.string(4), member: member.isEmpty ? nil : member,
                                       position: statement.int64(6)),
                receivedAt: statement.optionalInt64(7), rulesVersion: statement.int64(10), raw: raw, facts: []))
        }
        for index in details.indices {
            details[index].facts = try attributedFacts(LedgerSchema.factsOfRecord, details[index].dedupKey).map(\.fact)
        }
        return details
    }

    public func facts(ofSubject subject: String) throws(LedgerError) -> [AttributedFact] {
        try attributedFacts(LedgerSchema.factsOfSubject, subject)
    }

    private func attributedFacts(_ sql: String, _ value: String) throws(LedgerError) -> [AttributedFact] {
        let statement = try connection.prepare(sql)
        try statement.bind(1, value)
        var facts: [AttributedFact] = []
        while try statement.step() {
            guard let platform = Platform(rawValue: statement.string(0)) else {
                throw LedgerError(kind: .corrupt, path: path, message: "a fact has the unknown platform \(statement.string(0))")
            }
            facts.append(AttributedFact(fact: Fact(
                platform: platform, subject: statement.string(1), kind: Fact.Kind(rawValue: statement.string(2)),
                at: statement.int64(3), observedAt: statement.int64(4), ref: statement.optionalString(5),
                detail: statement.optionalString(6), productId: statement.optionalString(7),
                end: statement.optionalInt64(8), amountMicros: statement.optionalInt64(9),
                currency: statement.optionalString(10), flags: Fact.Flags(rawValue: Int(statement.int64(11)))),
                record: statement.optionalString(12)))
        }
        return facts
    }
}

extension Provenance {
    /// A place as ``description`` writes it (`FILE:POSITION`, `FILE[MEMBER]:POSITION`); `nil` for anything
    /// else (such as a dedup key: `sha256:…`, `msg:…`, `uuid:…`, whose tail is not a number).
    init?(reference: String) {
        guard let colon = reference.lastIndex(of: ":"), let position = Int64(reference[reference.index(after: colon)...]) else {
            return nil
        }
        let place = reference[..<colon]
        if place.hasSuffix("]"), let open = place.lastIndex(of: "[") {
            self.init(file: String(place[..<open]), member: String(place[place.index(after: open)..<place.index(before: place.endIndex)]),
                      position: position)
        } else {
            self.init(file: String(place), position: position)
        }
    }
}
