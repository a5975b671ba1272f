/// An exact amount of money in one currency: `units / unitsPerMicro` millionths of the major unit.
///
/// Sums of prices are whole micros (`unitsPerMicro` 1). MRR is summed in twelfths of a micro (`unitsPerMicro`
/// 12, see ``BillingDuration``) so that weekly, quarterly and yearly prices add up exactly; the division by 12
/// happens only when the amount is written. Written amounts are rounded half away from zero to 2 decimals.
public struct Money: Sendable, Hashable {
    public var units: Int64
    public var unitsPerMicro: Int64

    /// `micros` millionths of the major unit.
    public init(micros: Int64) {
        self.init(units: micros, unitsPerMicro: 1)
    }

    init(units: Int64, unitsPerMicro: Int64) {
        self.units = units
        self.unitsPerMicro = unitsPerMicro
    }

    /// The amount rounded half away from zero to whole cents (hundredths of the major unit).
    public var cents: Int64 { FullWidth.multiplyDivideRounded(units, 1, unitsPerMicro * 10_000) }

    /// Plain decimal with 2 places, no grouping, `-` for negatives: `4.99`, `-4.99`, `480.00`.
    public var text: String {
        let cents = self.cents
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return (cents < 0 ? "-" : "") + "\(magnitude / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }

    /// `self - other` as written: the difference of the two amounts rounded to cents, so that a written identity
    /// (`net = gross - refunds`) holds in the file even where an amount ends in half a cent.
    func writtenMinus(_ other: Money) -> Money {
        Money(micros: FullWidth.multiplyDivideRounded(FullWidth.subtract(cents, other.cents), 10_000, 1))
    }

    /// This amount times `rate`, rounded half away from zero to whole cents (the precision it is written with),
    /// computed from the exact amount so that nothing is rounded twice.
    func converted(by rate: ExchangeRate) -> Money {
        let cents = FullWidth.multiplyDivideRounded(units, rate.numerator, unitsPerMicro * rate.denominator * 10_000)
        return Money(micros: cents * 10_000)
    }
}
