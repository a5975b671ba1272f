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
    private let chains = Mutex<[HeaderKey: VerifiedChain]>([:])

    subscript(header: ArraySlice<UInt8>) -> VerifiedChain? {
        get { chains.withLock { $0[HeaderKey(bytes: header)] } }
        // Stored as a copy: the slice would keep the whole signing input of the first payload alive.
        set { chains.withLock { $0[HeaderKey(bytes: Array(header)[...])] = newValue } }
    }

    /// A header's bytes as a dictionary key. Hashes the bytes as one buffer: the synthesized hash of a `[UInt8]`
    /// feeds the hasher a byte at a time, which for a 4 kB header cost more than the lookup saved.
    private struct HeaderKey: Hashable {
        let bytes: ArraySlice<UInt8>

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (lhs: HeaderKey, rhs: HeaderKey) -> Bool {
            lhs.bytes.count == rhs.bytes.count && lhs.bytes.withUnsafeBytes { a in
                rhs.bytes.withUnsafeBytes { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
            }
        }
    }
}
