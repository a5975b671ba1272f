/// The `detail` of a Google `one_time` or `voided` row: an enum value as sent (`purchaseState`, `refundType`),
/// then `;quantity=N` when the payload counts units (`quantity` above 1, `voidedQuantity`): `0`, `0;quantity=3`,
/// `2;quantity=1`, `;quantity=2` (no value sent). A row without `;quantity=` reads as it did before quantities
/// were kept. Parsed as bytes, like ``GoogleSubscriptionState``'s code: report time reads every such row.
struct QuantifiedCode: Equatable {
    /// The enum value, kept verbatim also when unknown; `nil` when not sent.
    var value: Int64?
    /// Units; `nil` when not stated (one unit bought, or a refund of the whole).
    var quantity: Int64?

    init(value: Int64?, quantity: Int64?) {
        self.value = value
        self.quantity = quantity
    }

    /// The code as stored; `nil` when neither part is stated.
    var code: String? {
        guard value != nil || quantity != nil else { return nil }
        return (value.map(String.init) ?? "") + (quantity.map { ";quantity=\($0)" } ?? "")
    }

    /// Parses ``code``; `nil` (no detail) reads as nothing stated. A malformed code gives `nil`: the row is
    /// skipped, like a row of an unknown kind.
    init?(code: String?) {
        guard let code else {
            self.init(value: nil, quantity: nil)
            return
        }
        let parts = code.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)
        let value = parts[0].isEmpty ? nil : Int64(Substring(parts[0]))
        guard parts[0].isEmpty || value != nil else { return nil }
        guard parts.count == 2 else {
            self.init(value: value, quantity: nil)
            return
        }
        let prefix = "quantity=".utf8
        guard parts[1].starts(with: prefix), let quantity = Int64(Substring(parts[1].dropFirst(prefix.count))),
              quantity >= 1 else { return nil }
        self.init(value: value, quantity: quantity)
    }
}
