import AppStore
import Facts
import Ingest
import PlayStore

/// The stores the pipeline reads. Everything else in the pipeline is store-neutral: a store is a module that
/// provides a ``PayloadRecognizer`` (its shapes, for the record parser) and a ``StoreTranslator`` (its facts),
/// and a line in ``recognizers`` (docs/DESIGN.md, "Adding a store").
public enum StoreCatalog {
    /// Every store's payload shapes, in the order the record parser asks them.
    public static var recognizers: [any PayloadRecognizer] { [AppStorePayloads(), PlayStorePayloads()] }
}

extension RecordParser {
    /// A parser of every store's records (``StoreCatalog/recognizers``), checking times against `times`.
    public init(times: PlausibleTimes) {
        self.init(times: times, recognizers: StoreCatalog.recognizers)
    }
}

/// Turns one parsed record into what it states: the translate stage between the readers and the ledger. Each
/// record goes to the translator of its source's platform; a platform with none is quarantined `unrecognized`.
public struct RecordTranslator: Sendable {
    private let stores: [Platform: any StoreTranslator]

    /// A translator handing each record to the one of `stores` whose platform its source names.
    public init(stores: [any StoreTranslator]) {
        var byPlatform: [Platform: any StoreTranslator] = [:]
        for store in stores { byPlatform[store.platform] = store }
        self.stores = byPlatform
    }

    public func translate(_ record: ParsedRecord) -> Translation {
        guard let store = stores[record.source.platform] else {
            return .quarantined(.unrecognized, detail: "no translator for \(record.source.rawValue) payloads in this run")
        }
        return store.translate(record)
    }
}
