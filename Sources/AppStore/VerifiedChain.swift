import Foundation
import Synchronization

/// What verification keeps of a chain that passed: the leaf's signing key and the window in which every
/// certificate of the chain (leaf, intermediate, trusted root) is valid.
struct VerifiedChain: Sendable {
    /// The leaf's P-256 key, raw (x || y); kept as bytes because Crypto's key type is not `Sendable`.
    let leafKey: [UInt8]
    /// Latest `notBefore` of the chain.
    let validFrom: Date
    /// Earliest `notAfter` of the chain.
    let validUntil: Date
}

/// Chains that verified, keyed by the header text (base64url) that names them. Only successes are stored, so a
/// chain rejected at one `signedDate` is validated again for the next payload. Shared by copies of a
/// ``JWSVerifier``; the lock makes it safe across threads.
final class VerifiedChainCache: Sendable {
    private let chains = Mutex<[[UInt8]: VerifiedChain]>([:])

    subscript(key: [UInt8]) -> VerifiedChain? {
        get { chains.withLock { $0[key] } }
        set { chains.withLock { $0[key] = newValue } }
    }
}
