import Crypto
import Facts

/// The identity of a fact in the set: hex SHA-256 of every column but `observedAt`.
/// Two records stating the same thing at different times yield one key; the ledger keeps the earliest statement.
enum FactKey {
    static func of(_ fact: Fact) -> String {
        var encoder = DigestEncoder()
        encoder.append(fact.platform.rawValue)
        encoder.append(fact.subject)
        encoder.append(fact.kind.rawValue)
        encoder.append(fact.at)
        encoder.append(fact.ref)
        encoder.append(fact.detail)
        encoder.append(fact.productId)
        encoder.append(fact.end)
        encoder.append(fact.amountMicros)
        encoder.append(fact.currency)
        encoder.append(Int64(fact.flags.rawValue))
        return SHA256.hash(data: encoder.bytes).hexString
    }
}
