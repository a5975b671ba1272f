/// One subscription resource's state, normalised over v1 and v2: the `detail` code of a
/// ``GoogleFactKind/state`` fact.
///
/// The code is `v<version>;<state>;pay=<paymentState>;cancel=<cancelReason>` with the empty string for an
/// absent value, e.g. `v1;SUBSCRIPTION_STATE_IN_GRACE_PERIOD;pay=0;cancel=` or
/// `v2;SUBSCRIPTION_STATE_CANCELED;pay=;cancel=0`, and for a v1 resource sold with an introductory price a fifth
/// part `intro=<micros>x<cycles>` (``introductoryOffer``). `state` uses v2's `subscriptionState` names: verbatim for v2
/// (unknown values kept), derived for v1 (which has no state field) from `paymentState`, `cancelReason`,
/// `autoResumeTimeMillis` and whether the expiry had passed when the resource was fetched. `cancel` is v1's
/// `cancelReason` number; for v2 the `canceledStateContext` member mapped onto the same numbers
/// (0 user, 1 system, 2 replacement, 3 developer; ``declinedPriceIncrease`` for 1 with a price increase
/// pending). `pay` for v2 is what the line item's `offerPhase` implies (2 free trial, 1 a charged phase), empty
/// without one.
struct GoogleSubscriptionState: Hashable, Sendable {
    var version: Int
    var state: String
    /// v1 `paymentState` (0 pending, 1 received, 2 free trial, 3 deferred), for v2 implied by the offer phase;
    /// `nil` when absent.
    var paymentState: Int?
    var cancelReason: Int?
    /// v1 `introductoryPriceInfo`: the subscription was sold with `micros` (in the price's currency) for its first
    /// `cycles` billing periods, which follow a free trial when it began with one. `nil` without it (and for v2,
    /// whose offer phase says what the shown order is).
    var introductoryOffer: IntroductoryOffer?

    struct IntroductoryOffer: Hashable, Sendable {
        var micros: Int64
        var cycles: Int64
    }

    /// The `cancel` number of a system cancellation (1) while a price increase awaited the user's consent (v1
    /// `priceChange.state` 0, v2 `priceChangeState` OUTSTANDING or `priceStepUpConsentDetails.state` PENDING): a
    /// declined price increase, not a billing problem. Not a number Google sends.
    static let declinedPriceIncrease = 100

    static let active = "SUBSCRIPTION_STATE_ACTIVE"
    static let canceled = "SUBSCRIPTION_STATE_CANCELED"
    static let inGracePeriod = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
    static let onHold = "SUBSCRIPTION_STATE_ON_HOLD"
    static let paused = "SUBSCRIPTION_STATE_PAUSED"
    static let expired = "SUBSCRIPTION_STATE_EXPIRED"
    static let pending = "SUBSCRIPTION_STATE_PENDING"
    static let pendingPurchaseCanceled = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"

    var code: String {
        "v\(version);\(state);pay=\(paymentState.map(String.init) ?? "");cancel=\(cancelReason.map(String.init) ?? "")"
            + (introductoryOffer.map { ";intro=\($0.micros)x\($0.cycles)" } ?? "")
    }

    init(version: Int, state: String, paymentState: Int?, cancelReason: Int?) {
        self.version = version
        self.state = state
        self.paymentState = paymentState
        self.cancelReason = cancelReason
    }

    /// Parses ``code``; `nil` for anything else. Split as bytes: report time parses the code of every state fact,
    /// and splitting the string itself would find the grapheme boundaries of every character first.
    init?(code: String) {
        let parts = code.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard parts.count == 4 || parts.count == 5, parts[0].first == UInt8(ascii: "v"),
              let version = Int(Substring(parts[0].dropFirst())),
              parts[2].starts(with: "pay=".utf8), parts[3].starts(with: "cancel=".utf8) else { return nil }
        self.version = version
        self.state = String(Substring(parts[1]))
        self.paymentState = Int(Substring(parts[2].dropFirst(4)))
        self.cancelReason = Int(Substring(parts[3].dropFirst(7)))
        if parts.count == 5 {
            let offer = parts[4].split(separator: UInt8(ascii: "x"), omittingEmptySubsequences: false)
            guard parts[4].starts(with: "intro=".utf8), offer.count == 2, let micros = Int64(Substring(offer[0].dropFirst(6))),
                  let cycles = Int64(Substring(offer[1])) else { return nil }
            introductoryOffer = IntroductoryOffer(micros: micros, cycles: cycles)
        }
    }

    /// The state of a v1 `SubscriptionPurchase`, which has none: derived from what it shows at `observedAt`.
    /// A pending payment with the expiry still ahead is the grace period (Google extends the expiry to the grace
    /// end), with the expiry passed it is account hold; an `autoResumeTimeMillis` with the expiry passed is a pause;
    /// `paymentState` 3, a deferred upgrade or downgrade not yet in effect, is pending.
    static func v1(expiry: Int64, observedAt: Int64, paymentState: Int?, cancelReason: Int?,
                   autoRenewing: Bool?, autoResumeAt: Int64?) -> GoogleSubscriptionState {
        let state: String
        if expiry <= observedAt {
            if cancelReason != nil {
                state = expired
            } else if autoResumeAt != nil {
                state = paused
            } else if paymentState == 0 {
                state = onHold
            } else {
                state = expired
            }
        } else if paymentState == 3 {
            // A deferred upgrade or downgrade not yet in effect: nothing charged, nothing granted.
            state = pending
        } else if paymentState == 0 {
            state = inGracePeriod
        } else if cancelReason != nil || autoRenewing == false {
            state = canceled
        } else {
            state = active
        }
        return GoogleSubscriptionState(version: 1, state: state, paymentState: paymentState, cancelReason: cancelReason)
    }
}
