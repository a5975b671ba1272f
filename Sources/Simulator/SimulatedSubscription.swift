/// One simulated subscription: its truth (`timeline`) and the events that produced it.
struct SimulatedSubscription: Sendable {
    var timeline: TimelineSubscription
    var events: [StoreEvent]
    var userId: String
    var currency: String
    /// Sandbox (Apple) / test purchase (Google): logged, excluded, never part of the truth.
    var isTest: Bool
    /// Billing-issue grace period of the subscription's products on this platform (ms), by product id.
    var graceMillis: [String: Int64]
    /// The instant the subscription's auto-renew was last switched, with its new value, in time order.
    var autoRenewChanges: [(at: Int64, on: Bool)]
    /// Google: the purchase tokens of the chain, in order, with the token each one links to.
    var tokens: [(token: String, linked: String?)]
    /// Google: the order id base (`GPA.1234-5678-9012-34567`) of each token.
    var orderBases: [String: String]
}
