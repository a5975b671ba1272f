/// How the bytes of one file or archive member are laid out, decided by its name (case-insensitive).
///
/// The name is all we go by: archives of store payloads carry no MIME types, and sniffing magic bytes would
/// let a mislabelled file be read as something it is not without anyone noticing.
indirect enum ContainerKind: Sendable, Hashable {
    /// `.ndjson`, `.jsonl`: one record per line.
    case lines
    /// `.json`: one record, or a top-level array of records.
    case json
    /// `.gz`: gzip of the kind named by the rest of the name (`x.ndjson.gz` holds `.lines`). A bare `x.gz`
    /// holds lines: that is what log shippers write, and a file that is not would show up as quarantined lines.
    case gzip(ContainerKind)
    /// `.tar`; `.tar.gz` and `.tgz` are `.gzip(.tar)`.
    case tar
    /// `.zip`: a file on disk, read through its central directory (``ZipReader``, ZIPFoundation). A zip inside
    /// another archive or a gzip is reported as damage.
    case zip

    /// The kind for a file or member name; `nil` when the name has no supported extension.
    init?(name: String) {
        let lower = name.lowercased()
        if lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") {
            self = .lines
        } else if lower.hasSuffix(".json") {
            self = .json
        } else if lower.hasSuffix(".tar") {
            self = .tar
        } else if lower.hasSuffix(".tgz") {
            self = .gzip(.tar)
        } else if lower.hasSuffix(".zip") {
            self = .zip
        } else if lower.hasSuffix(".gz") {
            switch ContainerKind(name: String(lower.dropLast(3))) {
            case .lines?, nil: self = .gzip(.lines)
            case .json?: self = .gzip(.json)
            case .tar?: self = .gzip(.tar)
            case .zip?: self = .gzip(.zip)
            case .gzip?: return nil
            }
        } else {
            return nil
        }
    }
}
