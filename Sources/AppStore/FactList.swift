import Facts
import Ingest

/// The facts one record states, collected while translating, and the parts of it that could not be read;
/// `observedAt` is set once the record's statement time is known (``finish(observedAt:)``).
struct FactList {
    private(set) var facts: [Fact] = []
    /// Units of the record set aside (a transaction, a renewal info), each quarantined on its own.
    private(set) var parts: [QuarantinedPart] = []
    /// The latest instant at which the payload says something happened (purchases, changes, cancellations,
    /// failures): the statement time of last resort. Ends (expiries, grace ends) are left out: they lie in the
    /// future of the statement, and a statement dated there would win every "later wins" merge and push the
    /// default as-of time past the data.
    private(set) var latestInstant: Millis?

    /// States `fact` (its row, ``AppleFactCodec``; stamped with the statement time by ``translation(observedAt:)``).
    mutating func add(_ fact: AppleFact) {
        facts.append(AppleFactCodec.encode(fact, observedAt: 0))
        see(fact.at)
    }

    /// Notes an instant of the payload for ``latestInstant``.
    mutating func see(_ instant: Millis) {
        latestInstant = max(latestInstant ?? instant, instant)
    }

    /// Runs `read` on the unit at `path` (holding `value`); when it is quarantined, whatever it added is taken
    /// back, the unit is set aside as a part (the rest of the record is still read) and `nil` is returned.
    /// Exclusions are not caught: they are about the whole record.
    /// Facts and parts are only ever appended, so taking back is truncating to the counts before: a copy of the
    /// list kept for that shared its arrays, and every unit's first fact copied all the facts before it (a receipt
    /// of 20,000 transactions took 25 s).
    mutating func part<T>(_ path: String, _ value: JSON?, _ read: (inout FactList) throws(Rejection) -> T?) throws(Rejection) -> T? {
        let (factCount, partCount, latest) = (facts.count, parts.count, latestInstant)
        do throws(Rejection) {
            return try read(&self)
        } catch {
            guard case .quarantined(let reason, let detail) = error else { throw error }
            facts.removeSubrange(factCount...)
            parts.removeSubrange(partCount...)
            latestInstant = latest
            parts.append(QuarantinedPart(path: path, reason: reason, detail: detail,
                                         raw: Array(JSONWriter.compact(value ?? .null).utf8)))
            return nil
        }
    }

    /// The elements of the array member `key` of `container` (at `path`), read leniently (`JSON.elements`: `{}`,
    /// `[]` and `null` are none; a single object, the iOS 6 shape, is one element). A member that is no container
    /// at all is set aside as a part.
    mutating func elements(_ container: JSON?, _ key: String, path: String = "") throws(Rejection) -> [(path: String, value: JSON)] {
        guard let container else { return [] }
        return try part(JSON.path(path, key), container[key]) { _ throws(Rejection) -> [(path: String, value: JSON)]? in
            do throws(FieldError) {
                return try container.elements(key, path: path)
            } catch {
                throw .invalid(error.detail)
            }
        } ?? []
    }

    /// The optional object member `key` of `container` (at `path`), read leniently (`JSON.container`: `null`
    /// absent, `[]` an empty object); a member that is no object is set aside as a part and read as absent.
    mutating func container(_ container: JSON?, _ key: String, path: String = "") throws(Rejection) -> JSON? {
        guard let container else { return nil }
        return try part(JSON.path(path, key), container[key]) { _ throws(Rejection) -> JSON? in
            do throws(FieldError) {
                return try container.container(key, path: path)
            } catch {
                throw .invalid(error.detail)
            }
        }
    }

    /// The record's translation: its facts (``finish(observedAt:)``) with the parts set aside; a record whose
    /// every unit failed (no fact left) is quarantined whole with the first part's reason.
    func translation(observedAt: Millis) -> Translation {
        if facts.isEmpty, let first = parts.first { return .quarantined(first.reason, detail: first.detail) }
        return .used(finish(observedAt: observedAt), parts: parts)
    }

    /// The distinct facts, in the order first stated, all stamped with `observedAt`. (A payload often says a
    /// thing twice, e.g. a V2 subtype and its renewal info; the ledger would merge them, the count would not.)
    func finish(observedAt: Millis) -> [Fact] {
        var seen = Set<Fact>()
        var result: [Fact] = []
        result.reserveCapacity(facts.count)
        for var fact in facts {
            fact.observedAt = observedAt
            if seen.insert(fact).inserted { result.append(fact) }
        }
        return result
    }
}

/// Why a record yields no facts; converted to a ``Translation`` at the top of the translator.
enum Rejection: Error {
    case excluded(ExclusionReason)
    case quarantined(QuarantineReason, String)

    static func invalid(_ detail: String) -> Rejection { .quarantined(.invalidPayload, detail) }
}
