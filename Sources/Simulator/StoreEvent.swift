/// Something that happened to a subscription at `at` (ms UTC), as the simulation decided it. Payload writers
/// turn events into what each store would have sent; the timeline (periods, episodes) is the truth.
struct StoreEvent: Sendable {
    var at: Int64
    var kind: Kind

    enum Kind: Sendable {
        /// The first purchase (trial or paid) of period `period`.
        case purchase(period: Int)
        /// An automatic renewal: period `period` starts at the previous one's end.
        case renewal(period: Int)
        case autoRenewOff
        case autoRenewOn
        /// The renewal charge at the end of a period failed: episode `episode` starts (E).
        case billingFailed(episode: Int)
        /// The grace period ran out (G); the retry / account-hold phase begins.
        case graceExpired(episode: Int)
        /// The charge succeeded at T: period `period` starts.
        case recovered(episode: Int, period: Int)
        /// Retry / hold ran out without payment (L).
        case billingLost(episode: Int)
        /// The period ended with auto-renew off.
        case expired(period: Int)
        /// Period `period` was refunded (Apple) / revoked (Google) at `at`.
        case refund(period: Int)
        /// Upgrade at `at`: period `from` ends (replaced), period `to` starts.
        case upgrade(from: Int, to: Int)
        /// Apple: a later purchase on the same original transaction after expiry.
        case resubscribe(period: Int)
        /// Google: the user scheduled a pause; it takes effect at the current period's end.
        case pauseScheduled(resumeAt: Int64)
        /// Google: the subscription is paused from the end of `period`.
        case paused(period: Int)
        /// Google: the pause ended and period `period` was charged.
        case resumed(period: Int)
        /// A consumable / one-time product (`oneTimePurchases[index]`).
        case oneTime(index: Int)
    }
}
