import Foundation

/// A linear value axis from a "nice" lower to upper bound that includes zero, with about five ticks.
struct HTMLAxis: Sendable {
    let low: Double
    let high: Double
    let step: Double
    let top: Double
    let bottom: Double

    init(values: [Double], integer: Bool, top: Double, bottom: Double) {
        let finite = values.filter(\.isFinite)
        let minimum = min(0, finite.min() ?? 0)
        var maximum = max(0, finite.max() ?? 0)
        if maximum == minimum { maximum = minimum + (integer ? 5 : 1) }
        var step = Self.niceStep((maximum - minimum) / 5)
        if integer { step = max(1, step.rounded()) }
        self.step = step
        low = (minimum / step).rounded(.down) * step
        high = (maximum / step).rounded(.up) * step
        self.top = top
        self.bottom = bottom
    }

    /// 1, 2 or 5 times a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0, raw.isFinite else { return 1 }
        let power = pow(10, (log10(raw)).rounded(.down))
        let fraction = raw / power
        return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power
    }

    var ticks: [Double] {
        let count = Int(((high - low) / step).rounded())
        return (0...max(count, 0)).map { low + Double($0) * step }
    }

    func y(_ value: Double) -> Double {
        bottom - (value - low) / (high - low) * (bottom - top)
    }
}
