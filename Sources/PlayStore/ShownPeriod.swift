import Facts

/// When the period a Google subscription resource shows began, read from the resource alone: what a resource
/// logged without its fetch time (`received_at`, as API backfills export them) proves (`inputs.md`).
///
/// The resource shows its current order (`GPA.x` is order 0, renewal `GPA.x..N` is order N + 1, so N + 1 orders
/// came before it), the subscription's start and the current order's expiry, but no billing period: neither v1
/// nor v2 states one (v2's `offerDetails` names a base plan, not its length). So the period is inferred, without a
/// price list, from how many orders fit between the start and the expiry, among Google's base-plan periods, the
/// common ones first (P1M, P1Y, P1W, P3M, P6M, then P4W, P2M, P4M, P8M), in UTC calendar arithmetic:
/// 1. the first period whose k + 1 orders run back to back from the start to the expiry (±1 day), or whose last
///    k orders fit after a shorter first order (a free trial or an introductory period: the first order ended
///    after the start and lasted at most one period, +2 days); a common period is tried both ways before a rarer
///    one (9 × 4 weeks is also a 7-day trial and 8 months);
/// 2. else the one nearest the average order length (the subscription paused or was on hold in between).
/// The order shown began one such period before its expiry, never before the subscription's start. The guess can
/// be off after a pause; the history builder then places the snapshot between the fetches of the orders before
/// and after it (`TokenFacts`), and never takes it as a statement about auto-renewal.
enum ShownPeriod {
    /// A base-plan billing period: months or days.
    struct Length {
        var months: Int64
        var days: Int64
        /// The average length in days, for step 3.
        var nominalDays: Double { Double(months) * 30.436875 + Double(days) }

        /// `instant` moved back by `count` of these periods (`nil` on overflow).
        func back(_ count: Int64, from instant: Millis) -> Millis? {
            if months > 0 {
                let (total, overflow) = months.multipliedReportingOverflow(by: count)
                return overflow ? nil : Timestamp.addingMonths(-total, to: instant)
            }
            let (span, overflow) = (days * 86_400_000).multipliedReportingOverflow(by: count)
            let (result, carry) = instant.subtractingReportingOverflow(span)
            return overflow || carry ? nil : result
        }
    }

    static let candidates = [
        Length(months: 1, days: 0), Length(months: 12, days: 0), Length(months: 0, days: 7),
        Length(months: 3, days: 0), Length(months: 6, days: 0), Length(months: 0, days: 28),
        Length(months: 2, days: 0), Length(months: 4, days: 0), Length(months: 8, days: 0),
    ]

    private static let day: Millis = 86_400_000

    /// The start (ms, UTC) of the order with 0-based position `orderIndex` (``GoogleOrderId/index(_:)``) that
    /// expires at `expiry`, in a subscription that started at `subscriptionStart`.
    static func start(subscriptionStart start: Millis, expiry: Millis, orderIndex k: Int64) -> Millis {
        guard k >= 1, k < Int64.max, expiry > start else { return start }
        guard let length = billingPeriod(subscriptionStart: start, expiry: expiry, orderIndex: k),
              let begun = length.back(1, from: expiry) else { return start }
        return max(start, begun)
    }

    /// The billing period steps 1–2 choose; `nil` only when every candidate overflows.
    static func billingPeriod(subscriptionStart start: Millis, expiry: Millis, orderIndex k: Int64) -> Length? {
        for length in candidates {
            if let first = length.back(k + 1, from: expiry), Double(first) >= Double(start) - Double(day),
               Double(first) <= Double(start) + Double(day) { return length }
            if let firstEnd = length.back(k, from: expiry), firstEnd > start,
               Double(firstEnd) - Double(start) <= (length.nominalDays + 2) * Double(day) { return length }
        }
        let average = (Double(expiry) - Double(start)) / Double(k + 1) / Double(day)
        // Nearest by ratio (max(r, 1/r)): a week off a monthly plan matters more than a week off a yearly one.
        func distance(_ length: Length) -> Double {
            let ratio = average / length.nominalDays
            return max(ratio, 1 / ratio)
        }
        return candidates.min { distance($0) < distance($1) }
    }
}
