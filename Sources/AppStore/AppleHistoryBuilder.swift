import Facts

/// Rebuilds one Apple subscription's history from its facts.
public struct AppleHistoryBuilder: Sendable {
    public init() {}

    public func history(id: String, facts: [Fact]) -> SubscriptionHistory {
        SubscriptionHistory(platform: .apple, id: id)
    }
}
