import Facts

/// One row of `grace_recovery.csv`: billing-issue episodes whose renewal failed (E) in the month, per platform.
public struct GraceRecoveryRow: Sendable, Hashable {
    public var month: String
    public var platform: Platform
    public var episodes: Int
    /// Episodes with a grace phase (G > E).
    public var withGrace: Int
    /// Recovered before the grace ended (T < G).
    public var recoveredInGrace: Int
    /// Recovered in billing retry / account hold (T ≥ G).
    public var recoveredInRetry: Int
    public var lost: Int
    /// No outcome by the as-of time.
    public var open: Int
    /// Median of T − E over the recovered episodes, in hours (mean of the two middle values for an even count);
    /// `nil` when none recovered.
    public var medianHoursToRecover: Double?

    public var recovered: Int { recoveredInGrace + recoveredInRetry }
    /// recovered / (recovered + lost).
    public var recoveryRate: Ratio { Ratio(recovered, recovered + lost) }
    /// recovered_in_grace / (recovered + lost).
    public var graceRecoveryRate: Ratio { Ratio(recoveredInGrace, recovered + lost) }

    public static let columns = [
        "month", "platform", "episodes", "with_grace", "recovered_in_grace", "recovered_in_retry", "lost", "open",
        "recovery_rate", "grace_recovery_rate", "median_hours_to_recover",
    ]

    public var cells: [Cell] {
        [.text(month), .text(platform.rawValue), .count(episodes), .count(withGrace), .count(recoveredInGrace),
         .count(recoveredInRetry), .count(lost), .count(open), recoveryRate.cell, graceRecoveryRate.cell,
         medianHoursToRecover.map { .number(Ratio.fixed($0, places: 2)) } ?? .empty]
    }
}
