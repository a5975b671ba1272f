import SystemZstd

/// A zstd dictionary the ledger compresses payloads with, trained on the ledger's own first records.
///
/// Records repeat one another (every App Store JWS carries the same certificate chain, cumulative receipts repeat
/// history, every Google resource has the same member names), so compressing each record alone would keep most of
/// what the archives' gzip saved; a dictionary of what records share keeps a record to a few hundred bytes while
/// each stays readable on its own (a quarantined record is released, a record is shown, without its neighbours).
/// Measured on a simulated set (21,717 records, 82.7 MB of JSON, 21.6 MB as the simulator's gzip archives): zstd
/// level 3 per record without a dictionary 39.6 MB, with a 110 kB trained dictionary 5.1 MB; zlib per record
/// 39.3 MB, zlib in 1 MiB blocks 8.8 MB. On a larger set (106,494 records, 419 MB of JSON): level 3 with the
/// dictionary 25.6 MB in 0.89 s, level 1 26.9 MB in 0.34 s.
///
/// `id` is the `payload_dictionaries` row; 0 is reserved for "no dictionary" (a ledger too small to train one).
public struct PayloadDictionary: Sendable, Hashable {
    public var id: Int64
    public var bytes: [UInt8]

    public init(id: Int64, bytes: [UInt8]) {
        self.id = id
        self.bytes = bytes
    }

    /// The dictionary size zstd's own tooling defaults to (110 kB): larger gained 3% on the set above.
    public static let capacity = 112_640

    /// Trains a dictionary on sample records (`ZDICT_trainFromBuffer`); `nil` when the samples are too few or
    /// too alike for zstd to build one (then records are compressed without a dictionary).
    public static func train(samples: [[UInt8]], id: Int64) -> PayloadDictionary? {
        let total = samples.reduce(0) { $0 + $1.count }
        guard samples.count >= 8, total >= 4 * 1024 else { return nil }
        var joined: [UInt8] = []
        joined.reserveCapacity(total)
        for sample in samples { joined += sample }
        let sizes = samples.map(\.count)
        var dictionary = [UInt8](repeating: 0, count: min(capacity, max(total / 4, 256)))
        let written = dictionary.withUnsafeMutableBytes { out in
            joined.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizes in
                    ZDICT_trainFromBuffer(out.baseAddress, out.count, input.baseAddress, sizes.baseAddress,
                                          UInt32(sizes.count))
                }
            }
        }
        guard ZDICT_isError(written) == 0, written > 0 else { return nil }
        return PayloadDictionary(id: id, bytes: Array(dictionary.prefix(written)))
    }
}

/// Compresses payloads for the ledger: one zstd frame per record (content size in the header), level 1, with the
/// ledger's dictionary. A class because it owns zstd's contexts; not `Sendable`: one per thread (ingest's workers
/// each make their own from the shared ``PayloadDictionary``).
public final class PayloadCompressor {
    /// The dictionary's row id, stored beside each payload (0: none).
    public let dictionaryId: Int64
    private let context: OpaquePointer
    private let dictionary: OpaquePointer?

    public init(dictionary: PayloadDictionary?) {
        context = ZSTD_createCCtx()
        dictionaryId = dictionary?.id ?? 0
        self.dictionary = dictionary.flatMap { dictionary in
            dictionary.bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, Self.level) }
        }
    }

    deinit {
        ZSTD_freeCCtx(context)
        if let dictionary { ZSTD_freeCDict(dictionary) }
    }

    /// zstd's fastest level: with a dictionary it keeps records within 5% of level 3 at 40% of the time, and
    /// compression runs for every record ingest writes (level 9 saved 7% more than 3, at 5 times the time).
    static let level: Int32 = 1

    /// The compressed frame of `bytes`.
    public func compress(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let written = output.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { input in
                if let dictionary {
                    ZSTD_compress_usingCDict(context, out.baseAddress, out.count, input.baseAddress, input.count, dictionary)
                } else {
                    ZSTD_compressCCtx(context, out.baseAddress, out.count, input.baseAddress, input.count, Self.level)
                }
            }
        }
        // Compression into a buffer of ZSTD_compressBound bytes cannot fail short of memory exhaustion.
        precondition(ZSTD_isError(written) == 0, "zstd: \(String(cString: ZSTD_getErrorName(written)))")
        output.removeSubrange(written...)
        return output
    }
}

/// Decompresses ledger payloads written by ``PayloadCompressor``. One per thread, like the compressor.
public final class PayloadDecompressor {
    private let context: OpaquePointer
    private var dictionaries: [Int64: OpaquePointer] = [:]

    /// `dictionaries`: every dictionary the payloads may name.
    public init(dictionaries: [PayloadDictionary]) {
        context = ZSTD_createDCtx()
        for dictionary in dictionaries {
            if let handle = dictionary.bytes.withUnsafeBytes({ ZSTD_createDDict($0.baseAddress, $0.count) }) {
                self.dictionaries[dictionary.id] = handle
            }
        }
    }

    deinit {
        ZSTD_freeDCtx(context)
        for handle in dictionaries.values { ZSTD_freeDDict(handle) }
    }

    /// Largest payload accepted back (1 GiB): a frame header claiming more is damage, not a record.
    static let maximumSize: UInt64 = 1 << 30

    /// The original bytes; `nil` when the frame is damaged or names a dictionary this ledger does not hold.
    public func decompress(_ frame: [UInt8], dictionaryId: Int64) -> [UInt8]? {
        let size = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        guard size <= Self.maximumSize else { return nil }  // also rejects the "unknown" and "error" markers
        let dictionary = dictionaryId == 0 ? nil : dictionaries[dictionaryId]
        if dictionaryId != 0 && dictionary == nil { return nil }
        var output = [UInt8](repeating: 0, count: Int(size))
        let written = output.withUnsafeMutableBytes { out in
            frame.withUnsafeBytes { input in
                if let dictionary {
                    ZSTD_decompress_usingDDict(context, out.baseAddress, out.count, input.baseAddress, input.count, dictionary)
                } else {
                    ZSTD_decompressDCtx(context, out.baseAddress, out.count, input.baseAddress, input.count)
                }
            }
        }
        guard ZSTD_isError(written) == 0, written == Int(size) else { return nil }
        return output
    }
}

/// One record's bytes as the ledger keeps them: a zstd frame and the dictionary it needs (0: none).
public struct CompressedPayload: Sendable, Hashable {
    public var bytes: [UInt8]
    public var dictionaryId: Int64

    public init(bytes: [UInt8], dictionaryId: Int64) {
        self.bytes = bytes
        self.dictionaryId = dictionaryId
    }
}

extension PayloadCompressor {
    /// `bytes` compressed, with the dictionary it was compressed with.
    public func payload(_ bytes: [UInt8]) -> CompressedPayload {
        CompressedPayload(bytes: compress(bytes), dictionaryId: dictionaryId)
    }
}

extension PayloadDecompressor {
    /// The original bytes of `payload`; `nil` when damaged or its dictionary is unknown.
    public func bytes(of payload: CompressedPayload) -> [UInt8]? {
        decompress(payload.bytes, dictionaryId: payload.dictionaryId)
    }
}
