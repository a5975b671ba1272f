import Foundation
import Testing
@testable import Ingest

/// Deduplication keys: the same record read twice is one record, different records never are.
@Suite struct DedupKeyTests {
    func key(_ text: String) throws -> String {
        let raw = RawRecord(bytes: Array(text.utf8), provenance: Provenance(file: "f.ndjson", position: 1))
        return try RecordParser(times: testTimes).parse(raw).get().dedupKey
    }

    static let body = #"{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","paymentState":1,"orderId":"GPA.1-2-3-4"}"#

    @Test func memberOrderWhitespaceAndTheSpellingOfReceivedAtDoNotChangeTheKey() throws {
        let a = try key(#"{"received_at":"2024-03-01T12:00:00Z","source":"google.subscription.v1","purchase_token":"tok-A","subscription_id":"premium_monthly","body":\#(Self.body)}"#)
        let reordered = try key(#"{ "subscription_id" : "premium_monthly", "body": {"paymentState":1, "orderId":"GPA.1-2-3-4", "expiryTimeMillis":"1711972800000", "startTimeMillis":"1709294400000", "kind":"androidpublisher#subscriptionPurchase"}, "purchase_token":"tok-A", "received_at": 1709294400000, "source":"google.subscription.v1" }"#)
        let escapedBody = try key(#"{"received_at":"2024-03-01T13:00:00+01:00","source":"google.subscription.v1","purchase_token":"tok-A","subscription_id":"premium_monthly","body":"\#(Self.body.replacingOccurrences(of: "\"", with: "\\\""))"}"#)
        #expect(a == reordered)
        #expect(a == escapedBody)
    }

    /// A resource fetched again unchanged is another observation: its facts are dated by the fetch, so a ledger
    /// keeping one copy of both could not rebuild the second's (`reprocess`). A payload that dates its own
    /// statement (a decoded RTDN's `eventTimeMillis`, a receipt's `request_date_ms`, a JWS's `signedDate`) is
    /// one record however often and whenever it was logged; so is a notification that names itself.
    @Test func anUnchangedResourceFetchedAgainIsAnotherRecord() throws {
        func logged(_ body: String, at time: String?, context: String = "") throws -> String {
            let received = time.map { #""received_at":"\#($0)","# } ?? ""
            return try key(#"{\#(received)\#(context)"body":\#(body)}"#)
        }
        let resource = #""source":"google.subscription.v1","purchase_token":"tok-A","subscription_id":"premium_monthly","#
        let fetches = try [logged(Self.body, at: "2024-03-01T12:00:00Z", context: resource),
                           logged(Self.body, at: "2024-03-02T12:00:00Z", context: resource),
                           logged(Self.body, at: nil, context: resource)]
        #expect(Set(fetches).count == 3)
        let v1 = try ["2024-03-01T12:00:00Z", "2024-03-01T13:00:00Z"].map { try logged(StorePayloads.notificationV1, at: $0) }
        #expect(v1[0] != v1[1], "a V1 notification states its renewal status as of its logging")
        let selfDated = [StorePayloads.rtdn, StorePayloads.voidedRTDN, StorePayloads.verifyReceipt.replacingOccurrences(
            of: #""receipt":{"#, with: #""receipt":{"request_date_ms":"1709294400000","#), "\"" + StorePayloads.jws(StorePayloads.transactionInfo) + "\""]
        // An RTDN whose eventTimeMillis is null or empty is dated by its logging, as the translator dates it.
        for time in ["null", #""""#] {
            let undated = StorePayloads.voidedRTDN.replacingOccurrences(of: "1709294400123", with: time)
            #expect(try logged(undated, at: "2024-03-01T12:00:00Z") != logged(undated, at: "2024-03-02T12:00:00Z"))
        }
        for body in selfDated {
            let copies = try ["2024-03-01T12:00:00Z", "2024-03-03T08:00:00Z", nil].map { try logged(body, at: $0) }
            #expect(Set(copies).count == 1, "\(body.prefix(60))")
        }
    }

    @Test func differentTokensOrProductsWithIdenticalBodiesStayDistinct() throws {
        let a = try key(#"{"purchase_token":"tok-A","subscription_id":"premium_monthly","body":\#(Self.body)}"#)
        let b = try key(#"{"purchase_token":"tok-B","subscription_id":"premium_monthly","body":\#(Self.body)}"#)
        let c = try key(#"{"purchase_token":"tok-A","subscription_id":"premium_yearly","body":\#(Self.body)}"#)
        let bare = try key(Self.body)
        #expect(Set([a, b, c, bare]).count == 4)
    }

    @Test func differentPayloadValuesDiffer() throws {
        let a = try key(Self.body)
        let b = try key(Self.body.replacingOccurrences(of: "1711972800000", with: "1711972800001"))
        #expect(a != b)
    }

    @Test func appStoreV2KeyIsTheNotificationUUIDWhateverTheWrapping() throws {
        let raw = try key(StorePayloads.notificationV2)
        let enveloped = try key(#"{"received_at":"2024-03-01T12:00:00Z","body":\#(StorePayloads.notificationV2)}"#)
        let bare = try key("\"" + StorePayloads.signedPayload + "\"")
        #expect(raw == "uuid:" + StorePayloads.notificationUUID)
        #expect(enveloped == raw)
        #expect(bare == raw)
    }

    @Test func pubSubRedeliveryIsOneRecord() throws {
        let first = try key(StorePayloads.pubSubPush)
        let redelivered = try key(#"{"received_at":"2024-03-01T12:05:00Z","body":\#(StorePayloads.pubSubPush)}"#)
        #expect(first.hasPrefix("msg:" + StorePayloads.pubSubMessageId + ":"))
        #expect(first.count == "msg:".count + StorePayloads.pubSubMessageId.count + 1 + 64)
        #expect(redelivered == first)
    }

    /// inputs.md: "the same `messageId` with other data, as when exports of two subscriptions are merged, is two
    /// messages". Google's own example push (developer.android.com, "Real-time developer notifications
    /// reference") carries messageId 136969346945, and test fixtures copy it with data of their own.
    @Test func theSameMessageIdWithOtherDataIsAnotherMessage() throws {
        func push(_ rtdn: String, id: String = "136969346945") -> String {
            let data = Data(rtdn.utf8).base64EncodedString()
            return #"{"message":{"attributes":{"key":"value"},"data":"\#(data)","messageId":"\#(id)"},"subscription":"projects/myproject/subscriptions/mysubscription"}"#
        }
        let purchased = StorePayloads.rtdn
        let canceled = StorePayloads.rtdn.replacingOccurrences(of: #""notificationType":4"#, with: #""notificationType":3"#)
        #expect(purchased != canceled)
        let a = try key(push(purchased)), b = try key(push(canceled))
        #expect(a != b)
        #expect(a.hasPrefix("msg:136969346945:") && b.hasPrefix("msg:136969346945:"))
        // The data's spelling (member order, whitespace) is not its content.
        let respelled = try key(push(" " + purchased.replacingOccurrences(of: ",", with: ", ")))
        #expect(respelled == a)
        #expect(try key(push(purchased, id: "136969346946")) != a)
    }

    /// A Pub/Sub message without an id (a bare one, as a Cloud Function logs it, or `messageId: null`) is keyed as
    /// the RTDN it carries would be alone: dated by its own event time, so the same message logged at two times is
    /// one record. A `null` in one spelling of the id does not hide the other.
    @Test func aMessageWithoutAnIdIsKeyedAsItsNotification() throws {
        let data = Data(StorePayloads.rtdn.utf8).base64EncodedString()
        func bare(_ receivedAt: String) -> String {
            #"{"received_at":"\#(receivedAt)","source":"google.rtdn","body":{"@type":"type.googleapis.com/google.pubsub.v1.PubsubMessage","data":"\#(data)"}}"#
        }
        let early = try key(bare("2024-03-01T12:00:05Z")), late = try key(bare("2024-03-01T13:00:00Z"))
        #expect(early == late)
        let spelled = try key(#"{"message":{"data":"\#(data)","messageId":null,"message_id":"X9"},"subscription":"s"}"#)
        let plain = try key(#"{"message":{"data":"\#(data)","messageId":"X9"},"subscription":"s"}"#)
        #expect(spelled.hasPrefix("msg:X9:") && spelled == plain)
    }
}
