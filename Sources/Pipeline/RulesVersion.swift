import AppStore
import Ingest
import Ledger
import PlayStore

/// The version of the rules that turn a record into facts: one number for the parser, both translators and
/// the way facts are stored (ledger.md, "Rules version"). The ledger keeps it beside every record and for the
/// ledger as a whole; facts made by another version are stale, and `reprocess` rebuilds them from the payloads.
///
/// The sum of the parts' versions: each part only ever raises its own, so the sum changes whenever any part
/// does, and never returns to an earlier value.
public enum RulesVersion {
    public static let current: Int64 = RecordParser.rulesVersion + AppStoreTranslator.rulesVersion
        + PlayStoreTranslator.rulesVersion + FactKey.version
}
