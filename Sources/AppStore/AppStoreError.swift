/// Why an ``AppStoreTranslator`` could not be configured.
public enum AppStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A trusted root given to ``AppStoreTranslator/init(trustedRoots:bundleIds:)`` is not a DER certificate.
    case unparsableRoot(index: Int, reason: String)

    public var description: String {
        switch self {
        case .unparsableRoot(let index, let reason): return "trusted root #\(index) is not a DER certificate: \(reason)"
        }
    }
}
