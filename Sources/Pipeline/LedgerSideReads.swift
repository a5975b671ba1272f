import Facts
import Foundation
import Ledger
import Synchronization

/// The two reads of a whole ledger a report makes besides its subscriptions: the check that it is sound
/// (``LedgerStore/quickCheck()``) and the statistics of the summary's `ingest` section
/// (``LedgerStore/statistics()``). Each reads every page or every record; run one after the other before the
/// slices, they were a third of a sliced report's time with one core idle. Here they run on a thread and a
/// connection of their own while the slices fold, and ``finish()`` waits for them.
///
/// Nothing is written before ``finish()`` has returned: a damaged ledger still stops the report before any
/// number leaves it, whatever the slices read meanwhile.
final class LedgerSideReads: Sendable {
    private let result = Mutex<Result<IngestStatistics, ReportJobError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts both reads on `location`, opened read-only; the statistics' event range only with
    /// `readingEventRange` (a report without `--as-of` reads it for the as-of already).
    init(location: LedgerLocation, readingEventRange: Bool) {
        let thread = Thread { [self] in
            let outcome = Result { () throws(ReportJobError) -> IngestStatistics in
                try ReportBasis.reading { () throws(LedgerError) in
                    let ledger = try location.open(.readOnly)
                    try ledger.quickCheck()
                    return try ledger.statistics(readingEventRange: readingEventRange)
                }
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.name = "ledger side reads"
        thread.start()
    }

    /// Waits for the reads: the statistics, or why the ledger is damaged or could not be read.
    func finish() throws(ReportJobError) -> IngestStatistics {
        done.wait()
        done.signal()
        guard let outcome = result.withLock({ $0 }) else { preconditionFailure("the side reads report before they signal") }
        return try outcome.get()
    }
}
