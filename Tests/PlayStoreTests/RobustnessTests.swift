import Facts
import Ingest
@testable import PlayStore
import Testing

/// Bad input never traps: every member of realistic payloads replaced by every wrong shape still yields a
/// translation, and any subset of a subscription's facts still yields a history that keeps its invariants.
struct RobustnessTests {
    static let wrongValues: [JSON] = [.object(JSONObject()), .array([]), .string("abc"), .bool(true), .null,
                                      .number("1e400"), .number("-9223372036854775808"), .number("9223372036854775807"),
                                      .number("171000000000000000"), .string(""), .array([.number("1")]),
                                      .object(JSONObject([("a", .number("1"))]))]

    private func mutations(of json: String) throws -> [JSON] {
        guard case .object(let object) = try JSONParser.parse(json) else { return [] }
        var result: [JSON] = []
        for (index, key) in object.keys.enumerated() {
            for value in Self.wrongValues {
                var members = Array(object.members)
                members[index] = (key, value)
                result.append(.object(JSONObject(members)))
            }
        }
        return result
    }

    @Test func everyWrongMemberIsHandled() throws {
        let translator = PlayStoreTranslator(packageNames: [package], times: testTimes)
        let payloads: [(SourceKind, String)] = [
            (.googleSubscriptionV1, v1JSON(start: 1_704_067_200_000, expiry: 1_706_745_600_000, orderId: "GPA.1..9223372036854775807",
                                           paymentState: 0, autoRenewing: true, cancelReason: 1, userCancellation: 1_705_000_000_000,
                                           autoResume: 1_709_000_000_000, linked: "old")),
            (.googleSubscriptionV2, v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-01-01T00:00:00Z",
                                           expiry: "2024-02-01T00:00:00Z", latestOrderId: "GPA.1", units: "9223372036854775807")),
            (.googleRTDN, rtdnJSON(token: "t", product: "p", type: 2, at: 1_704_067_200_000)),
            (.googleVoidedPurchase, #"{"kind":"androidpublisher#voidedPurchase","purchaseToken":"t","voidedTimeMillis":"1704067200005","orderId":"GPA.1"}"#),
            (.googleVoidedPurchase, #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1704067200005","orderId":"GPA.1"},{"purchaseToken":"u","voidedTimeMillis":"1704067200006"}]}"#),
            (.googleProductV1, #"{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1704067200005","purchaseState":0,"orderId":"GPA.2"}"#),
        ]
        var quarantined = 0
        for (source, json) in payloads {
            for mutated in try mutations(of: json) {
                let record = ParsedRecord(provenance: Provenance(file: "f", position: 0), source: source,
                                          envelope: Envelope(receivedAt: 1_704_067_300_000, packageName: package, productId: "p", purchaseToken: "t"),
                                          payload: .json(mutated), dedupKey: "k")
                switch translator.translate(record) {
                case .quarantined(let reason, let detail):
                    #expect(!detail.isEmpty)
                    #expect([.invalidPayload, .missingContext, .unrecognized, .wrongPackage, .implausibleTimestamp].contains(reason))
                    quarantined += 1
                case .used(let facts, let parts):
                    // Issue 18: no used fact ever carries a time outside the plausible window.
                    #expect(facts.allSatisfy { testTimes.contains($0) }, "\(JSONWriter.compact(mutated))")
                    #expect(parts.allSatisfy { !$0.detail.isEmpty && !$0.path.isEmpty })
                case .excluded(_, let markers):
                    #expect(markers.allSatisfy { testTimes.contains($0) })
                }
            }
        }
        #expect(quarantined > 50)
    }

    @Test func anySubsetOfFactsKeepsTheInvariants() throws {
        let facts = try GoogleHistoryBuilderTests.exampleB()
        var generator = SeededGenerator(state: 7)
        for _ in 0..<200 {
            let subset = facts.filter { _ in generator.next() % 3 != 0 }
            let history = GoogleHistoryBuilder().history(id: "tok-B", facts: subset)
            #expect(history.periods.allSatisfy { $0.start < $0.end })
            #expect(history.periods == history.periods.sorted { ($0.start, $0.id) < ($1.start, $1.id) })
            #expect(zip(history.periods, history.periods.dropFirst()).allSatisfy { $0.end <= $1.start })
            #expect(history.episodes.allSatisfy { $0.failedAt <= $0.graceEnd })
        }
    }
}
