/// What a correct ingest must report for the archives written: every record counted once, by outcome.
struct IngestTally: Sendable {
    enum Outcome: Sendable { case used, duplicate, excluded(String), quarantined(String) }

    var used = 0
    var duplicate = 0
    var excludedByReason: [String: Int] = [:]
    var quarantinedByReason: [String: Int] = [:]
    var damagedFiles = 0
    var forged = 0
    var garbage = 0
    /// cli.md `warnings`, by name: every name the pipeline reports, zeros included.
    var warnings: [String: Int] = [timestampsInSeconds: 0, messageIdConflicts: 0, partsQuarantined: 0]

    static let timestampsInSeconds = "timestamps_in_seconds"
    static let messageIdConflicts = "message_id_conflicts"
    static let partsQuarantined = "parts_quarantined"

    var excluded: Int { excludedByReason.values.reduce(0, +) }
    var quarantined: Int { quarantinedByReason.values.reduce(0, +) }
    var read: Int { used + duplicate + excluded + quarantined }

    mutating func count(_ outcome: Outcome, times: Int = 1) {
        switch outcome {
        case .used: used += times
        case .duplicate: duplicate += times
        case .excluded(let reason): excludedByReason[reason, default: 0] += times
        case .quarantined(let reason): quarantinedByReason[reason, default: 0] += times
        }
    }

    mutating func warn(_ name: String) {
        warnings[name, default: 0] += 1
    }

    var json: JSONValue {
        func sorted(_ map: [String: Int]) -> JSONValue {
            .object(map.keys.sorted().map { ($0, .int(map[$0] ?? 0)) })
        }
        return .object([
            ("read", .int(read)), ("used", .int(used)), ("duplicate", .int(duplicate)),
            ("excluded", .int(excluded)), ("quarantined", .int(quarantined)),
            ("excluded_by_reason", sorted(excludedByReason)), ("quarantined_by_reason", sorted(quarantinedByReason)),
            ("damaged_files", .int(damagedFiles)), ("forged", .int(forged)), ("garbage", .int(garbage)),
            ("warnings", sorted(warnings)),
        ])
    }
}
