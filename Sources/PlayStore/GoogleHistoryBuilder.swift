import Facts

/// Rebuilds one Google subscription (a chain of purchase tokens) from the set of its facts.
public struct GoogleHistoryBuilder: Sendable {
    public init() {}

    /// The history of the chain named by its first token `id`, from the facts of every token of the chain.
    public func history(id: String, facts: [Fact]) -> SubscriptionHistory {
        SubscriptionHistory(platform: .google, id: id)
    }
}
