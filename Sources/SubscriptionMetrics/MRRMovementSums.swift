/// The movements of one month × platform × currency (`metrics.md` "mrr_movements"), exact: amounts in twelfths
/// of a micro (see ``BillingDuration/monthlyTwelfths(ofMicros:)``), counts in subscriptions.
///
/// A plain sum: the movements of a set of subscriptions are the ``add(_:)`` of theirs, in any order and in any
/// grouping, so partial sums (of one subscription, of a slice of the ledger) merge by adding.
struct MRRMovementSums: Sendable, Hashable {
    var newTwelfths: Int64 = 0
    var expansionTwelfths: Int64 = 0
    var contractionTwelfths: Int64 = 0
    var churnedTwelfths: Int64 = 0
    var reactivationTwelfths: Int64 = 0
    var newCount = 0
    var expansionCount = 0
    var contractionCount = 0
    var churnedCount = 0
    var reactivationCount = 0

    /// One subscription's movement of `twelfths` (> 0) of `kind`.
    init(_ kind: MRRMovementKind, twelfths: Int64) {
        switch kind {
        case .new: (newTwelfths, newCount) = (twelfths, 1)
        case .expansion: (expansionTwelfths, expansionCount) = (twelfths, 1)
        case .contraction: (contractionTwelfths, contractionCount) = (twelfths, 1)
        case .churned: (churnedTwelfths, churnedCount) = (twelfths, 1)
        case .reactivation: (reactivationTwelfths, reactivationCount) = (twelfths, 1)
        }
    }

    /// No movement.
    init() {}

    /// The five amounts in column order (new, expansion, contraction, churned, reactivation).
    var twelfths: [Int64] { [newTwelfths, expansionTwelfths, contractionTwelfths, churnedTwelfths, reactivationTwelfths] }

    /// The five counts in column order.
    var counts: [Int] { [newCount, expansionCount, contractionCount, churnedCount, reactivationCount] }

    /// Adds `other`'s amounts and counts to these.
    mutating func add(_ other: MRRMovementSums) {
        newTwelfths = FullWidth.add(newTwelfths, other.newTwelfths)
        expansionTwelfths = FullWidth.add(expansionTwelfths, other.expansionTwelfths)
        contractionTwelfths = FullWidth.add(contractionTwelfths, other.contractionTwelfths)
        churnedTwelfths = FullWidth.add(churnedTwelfths, other.churnedTwelfths)
        reactivationTwelfths = FullWidth.add(reactivationTwelfths, other.reactivationTwelfths)
        newCount += other.newCount
        expansionCount += other.expansionCount
        contractionCount += other.contractionCount
        churnedCount += other.churnedCount
        reactivationCount += other.reactivationCount
    }
}

/// Why a subscription's MRR differs between the start and the end of a month (`metrics.md` "mrr_movements").
enum MRRMovementKind: Int, Sendable, CaseIterable {
    /// 0 at the start, > 0 at the end, and never in `paid` state before the start of the month.
    case new
    /// More at the end than at the start, in the same currency.
    case expansion
    /// Less at the end than at the start (but > 0), in the same currency.
    case contraction
    /// > 0 at the start, 0 at the end (or moved to another currency).
    case churned
    /// 0 at the start, > 0 at the end, and in `paid` state at some time before (or moved from another currency).
    case reactivation

    /// +1 for the movements that add to MRR, −1 for those that take from it.
    var sign: Int64 {
        switch self {
        case .new, .expansion, .reactivation: 1
        case .contraction, .churned: -1
        }
    }
}
