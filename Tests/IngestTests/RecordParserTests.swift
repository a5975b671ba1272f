import Foundation
import Facts
import Testing
@testable import Ingest

/// Records (`inputs.md`, "Records"): envelopes, bodies in every form, and every row of the sniffer's shape table.
@Suite struct RecordParserTests {
    let parser = RecordParser(times: testTimes)

    func raw(_ text: String) -> RawRecord {
        RawRecord(bytes: Array(text.utf8), provenance: Provenance(file: "in.ndjson", position: 7))
    }

    func parsed(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ParsedRecord {
        switch parser.parse(raw(text)) {
        case .success(let record): return record
        case .failure(let rejection):
            Issue.record("rejected: \(rejection)", sourceLocation: sourceLocation)
            throw rejection
        }
    }

    func rejection(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> RecordRejection? {
        switch parser.parse(raw(text)) {
        case .success(let record):
            Issue.record("accepted as \(record.source)", sourceLocation: sourceLocation)
            return nil
        case .failure(let rejection): return rejection
        }
    }

    static let jsonShapes: [(String, SourceKind)] = [
        (StorePayloads.notificationV1, .appleNotificationV1),
        (StorePayloads.verifyReceipt, .appleVerifyReceipt),
        (StorePayloads.rtdn, .googleRTDN),
        (StorePayloads.voidedRTDN, .googleRTDN),
        (StorePayloads.oneTimeRTDN, .googleRTDN),
        (StorePayloads.testRTDN, .googleRTDN),
        (StorePayloads.subscriptionV1, .googleSubscriptionV1),
        (StorePayloads.subscriptionV1WithoutKind, .googleSubscriptionV1),
        (StorePayloads.subscriptionV2, .googleSubscriptionV2),
        (StorePayloads.subscriptionV2WithoutKind, .googleSubscriptionV2),
        (StorePayloads.productV1, .googleProductV1),
        (StorePayloads.productV1WithoutKind, .googleProductV1),
        (StorePayloads.voidedPurchase, .googleVoidedPurchase),
        (StorePayloads.voidedPurchaseWithoutKind, .googleVoidedPurchase),
        (StorePayloads.voidedPurchasesList, .googleVoidedPurchase),
    ]

    @Test(arguments: jsonShapes)
    func rawJSONPayloadIsSniffedByShape(text: String, kind: SourceKind) throws {
        let record = try parsed(text)
        #expect(record.source == kind)
        #expect(record.payload == .json(try JSONParser.parse(text)))
        #expect(record.envelope == Envelope())
        #expect(record.dedupKey.hasPrefix("sha256:"))
        #expect(record.dedupKey.utf8.count == 7 + 64)
        #expect(record.provenance == Provenance(file: "in.ndjson", position: 7))
    }

    @Test func signedPayloadIsAppStoreV2KeyedByNotificationUUID() throws {
        let record = try parsed(StorePayloads.notificationV2)
        #expect(record.source == .appleNotificationV2)
        #expect(record.payload == .jws(StorePayloads.signedPayload))
        #expect(record.dedupKey == "uuid:" + StorePayloads.notificationUUID)
    }

    @Test func bareJWSStringsAreToldApartByTheirPayload() throws {
        let notification = try parsed("\"" + StorePayloads.signedPayload + "\"")
        #expect(notification.source == .appleNotificationV2)
        #expect(notification.payload == .jws(StorePayloads.signedPayload))
        #expect(notification.dedupKey == "uuid:" + StorePayloads.notificationUUID)

        let transaction = StorePayloads.jws(StorePayloads.transactionInfo)
        let transactionRecord = try parsed("\"" + transaction + "\"")
        #expect(transactionRecord.source == .appleTransaction)
        #expect(transactionRecord.payload == .jws(transaction))
        #expect(transactionRecord.dedupKey.hasPrefix("sha256:"))

        let renewal = StorePayloads.jws(StorePayloads.renewalInfo)
        let renewalRecord = try parsed("\"" + renewal + "\"")
        #expect(renewalRecord.source == .appleRenewalInfo)
        #expect(renewalRecord.payload == .jws(renewal))

        // A JWS written without quotes on its own line is the same record.
        let unquoted = try parsed(transaction)
        #expect(unquoted.source == .appleTransaction)
        #expect(unquoted.dedupKey == transactionRecord.dedupKey)
    }

    @Test func appStoreServerAPIResponsesAreRecognisedByTheirKeys() throws {
        let transaction = StorePayloads.jws(StorePayloads.transactionInfo)
        let history = #"{"revision":"1709294405000_2000000512345678","bundleId":"com.example.app","appAppleId":1234567890,"environment":"Production","hasMore":true,"signedTransactions":["\#(transaction)"]}"#
        #expect(try parsed(history).source == .appleTransactionHistory)
        let renewal = StorePayloads.jws(StorePayloads.renewalInfo)
        let statuses = #"{"environment":"Production","bundleId":"com.example.app","appAppleId":1234567890,"data":[{"subscriptionGroupIdentifier":"21345678","lastTransactions":[{"originalTransactionId":"2000000500000000","status":1,"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"}]}]}"#
        #expect(try parsed(statuses).source == .appleSubscriptionStatuses)
        let noGroups = #"{"environment":"Production","bundleId":"com.example.app","appAppleId":1234567890,"data":[]}"#
        #expect(try parsed(noGroups).source == .appleSubscriptionStatuses)
        let declared = #"{"source":"apple.transaction_history","received_at":"2024-03-01T12:00:00Z","body":\#(history)}"#
        #expect(try parsed(declared).source == .appleTransactionHistory)
    }

    @Test func pubSubPushIsDecodedToTheRTDN() throws {
        let record = try parsed(StorePayloads.pubSubPush)
        #expect(record.source == .googleRTDN)
        #expect(record.payload == .json(try JSONParser.parse(StorePayloads.rtdn)))
        #expect(record.dedupKey.hasPrefix("msg:" + StorePayloads.pubSubMessageId + ":"))
        #expect(record.envelope.receivedAt == 1_709_294_401_456)
    }

    @Test func pubSubPushWithSnakeCaseMessageId() throws {
        let data = Data(StorePayloads.testRTDN.utf8).base64EncodedString()
        let push = #"{"message":{"data":"\#(data)","message_id":"77","publish_time":"2024-03-01T12:00:00Z"},"subscription":"projects/p/subscriptions/s"}"#
        let record = try parsed(push)
        #expect(record.source == .googleRTDN)
        #expect(record.dedupKey.hasPrefix("msg:77:"))
        #expect(record.envelope.receivedAt == 1_709_294_400_000)
    }

    @Test func pubSubPushWithBadDataIsRejected() {
        let notBase64 = #"{"message":{"data":"%%%","messageId":"1"},"subscription":"s"}"#
        #expect(rejection(notBase64)?.reason == .invalidPayload)
        let notJSON = #"{"message":{"data":"\#(Data("garbage{".utf8).base64EncodedString())","messageId":"1"},"subscription":"s"}"#
        let rejected = rejection(notJSON)
        #expect(rejected?.reason == .malformedJSON)
        #expect(rejected?.detail.hasPrefix("Pub/Sub message.data: invalid JSON at byte") == true)
    }

    /// Pub/Sub's other shapes: one message of a pull (`ackId` beside it, no `subscription`), a bare message (as a
    /// background Cloud Function receives it, or as a client library logs it) and a whole pull response.
    @Test func pulledAndBarePubSubMessagesAreDecoded() throws {
        let data = Data(StorePayloads.rtdn.utf8).base64EncodedString()
        let pulled = #"{"ackId":"RVNEUAYWLF1GSFE3GQhoUQ5PXiM_NSAoRRoHIGoKEkMDBmB3SQhoUQ9PXiM","message":{"data":"\#(data)","messageId":"2070443601311540","publishTime":"2024-03-01T12:00:01.456Z"},"deliveryAttempt":1}"#
        let bare = #"{"data":"\#(data)","attributes":{},"messageId":"2070443601311540","publishTime":"2024-03-01T12:00:01.456Z"}"#
        let function = #"{"@type":"type.googleapis.com/google.pubsub.v1.PubsubMessage","attributes":null,"data":"\#(data)"}"#
        for text in [pulled, bare] {
            let record = try parsed(text)
            #expect(record.source == .googleRTDN)
            #expect(record.payload == .json(try JSONParser.parse(StorePayloads.rtdn)))
            #expect(record.dedupKey.hasPrefix("msg:2070443601311540:"))
            #expect(record.envelope.receivedAt == 1_709_294_401_456)
        }
        let fromFunction = try parsed(function)
        let rtdn = try JSONParser.parse(StorePayloads.rtdn)
        #expect(fromFunction.source == .googleRTDN && fromFunction.payload == .json(rtdn))
        let response = #"{"receivedMessages":[\#(pulled)]}"#
        let whole = try parsed(response)
        let responseJSON = try JSONParser.parse(response)
        #expect(whole.source == .googleRTDN && whole.payload == .json(responseJSON))
        #expect(try parsed(#"{"receivedMessages":{}}"#).source == .googleRTDN)
        // A `purchases.productsv2` resource, with its kind or without.
        let productV2 = #"{"kind":"androidpublisher#productPurchaseV2","productLineItem":[{"productId":"coins_100"}],"purchaseStateContext":{"purchaseState":"PURCHASED"},"purchaseCompletionTime":"2024-03-04T12:00:00Z"}"#
        #expect(try parsed(productV2).source.rawValue == "google.product.v2")
        let withoutKind = productV2.replacingOccurrences(of: #""kind":"androidpublisher#productPurchaseV2","#, with: "")
        #expect(try parsed(withoutKind).source.rawValue == "google.product.v2")
        // A `data` member that is no string is not a Pub/Sub message (an App Store notification's `data` is an object).
        #expect(rejection(#"{"data":{"messageId":"1"},"messageId":"1"}"#)?.reason == .unrecognized)
    }

    @Test func envelopeWithObjectBodyAndContext() throws {
        let text = #"{"received_at":"2024-03-01T12:00:05.250+01:00","source":"google.subscription.v1","app_user_id":"u-123","package_name":"com.example.app","subscription_id":"premium_monthly","purchase_token":"\#(StorePayloads.purchaseToken)","order_id":"GPA.3372-8841-2214-50781..0","currency":"USD","storefront":"USA","body":\#(StorePayloads.subscriptionV1)}"#
        let record = try parsed(text)
        #expect(record.source == .googleSubscriptionV1)
        #expect(record.payload == .json(try JSONParser.parse(StorePayloads.subscriptionV1)))
        #expect(record.envelope == Envelope(receivedAt: 1_709_290_805_250, appUserId: "u-123", packageName: "com.example.app",
                                            productId: "premium_monthly", purchaseToken: StorePayloads.purchaseToken,
                                            orderId: "GPA.3372-8841-2214-50781..0", currency: "USD", storefront: "USA"))
    }

    @Test func envelopeProductIdFillsProductId() throws {
        let text = #"{"received_at":1709294400000,"purchase_token":"t","product_id":"coins_100","body":\#(StorePayloads.productV1)}"#
        let record = try parsed(text)
        #expect(record.source == .googleProductV1)
        #expect(record.envelope.productId == "coins_100")
        #expect(record.envelope.receivedAt == 1_709_294_400_000)
    }

    @Test func escapedStringBodyIsParsed() throws {
        let escaped = String(decoding: JSONWriter.canonical(.string(StorePayloads.verifyReceipt)), as: UTF8.self)
        let text = #"{"received_at":"1709294400000","app_user_id":"u-9","body":\#(escaped)}"#
        let record = try parsed(text)
        #expect(record.source == .appleVerifyReceipt)
        #expect(record.payload == .json(try JSONParser.parse(StorePayloads.verifyReceipt)))
        #expect(record.envelope.receivedAt == 1_709_294_400_000)
        #expect(record.envelope.appUserId == "u-9")
    }

    @Test func escapedPubSubBodyWithDeclaredSourceIsStillDecoded() throws {
        let escaped = String(decoding: JSONWriter.canonical(.string(StorePayloads.pubSubPush)), as: UTF8.self)
        let text = #"{"received_at":"2024-03-01T12:00:09Z","source":"google.rtdn","body":\#(escaped)}"#
        let record = try parsed(text)
        #expect(record.source == .googleRTDN)
        #expect(record.payload == .json(try JSONParser.parse(StorePayloads.rtdn)))
        #expect(record.dedupKey == (try parsed(StorePayloads.pubSubPush)).dedupKey)
        // The envelope's own time wins over the Pub/Sub publishTime.
        #expect(record.envelope.receivedAt == 1_709_294_409_000)
    }

    @Test func jwsBodies() throws {
        let transaction = StorePayloads.jws(StorePayloads.transactionInfo)
        let declared = try parsed(#"{"received_at":"2024-03-01T12:00:00Z","source":"apple.transaction","app_user_id":"u-1","body":"\#(transaction)"}"#)
        #expect(declared.source == .appleTransaction)
        #expect(declared.payload == .jws(transaction))
        #expect(declared.envelope.appUserId == "u-1")

        let sniffed = try parsed(#"{"received_at":"2024-03-01T12:00:00Z","body":"\#(StorePayloads.jws(StorePayloads.renewalInfo))"}"#)
        #expect(sniffed.source == .appleRenewalInfo)

        let notification = try parsed(#"{"source":"apple.notification.v2","body":\#(StorePayloads.notificationV2)}"#)
        #expect(notification.source == .appleNotificationV2)
        #expect(notification.payload == .jws(StorePayloads.signedPayload))
        #expect(notification.dedupKey == "uuid:" + StorePayloads.notificationUUID)
    }

    @Test func declaredSourceWinsOverAnUnknownShape() throws {
        let record = try parsed(#"{"source":"google.subscription.v2","body":{"someNewField":1}}"#)
        #expect(record.source == .googleSubscriptionV2)
        #expect(record.payload == .json(.object(JSONObject([("someNewField", .number("1"))]))))
    }

    @Test func garbageIsMalformedJSONWithTheParserOffset() {
        let rejected = rejection(#"{"notification_type": "DID_RENEW", oops}"#)
        #expect(rejected?.reason == .malformedJSON)
        #expect(rejected?.detail == "invalid JSON at byte 35: expected a member name")
        #expect(rejection("\u{1F}\u{8B}binary")?.reason == .malformedJSON)
        #expect(rejection(#"{"body":"{\"status\":0, cut"}"#)?.reason == .malformedJSON)
    }

    @Test func unknownShapeIsUnrecognizedNamingItsKeys() {
        let rejected = rejection(#"{"event":"purchase","user":"u-1","amount":9.99}"#)
        #expect(rejected?.reason == .unrecognized)
        #expect(rejected?.detail == "no known payload shape; top-level keys: event, user, amount")
        let many = "{" + (1...12).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(rejection(many)?.detail == "no known payload shape; top-level keys: k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, ...")
        #expect(rejection("[1,2]")?.reason == .unrecognized)
        #expect(rejection(#""just a string""#)?.reason == .unrecognized)
        // A verifyReceipt-like `status` alone is not enough.
        #expect(rejection(#"{"status":21007}"#)?.reason == .unrecognized)
        let unknownJWS = StorePayloads.jws(#"{"iss":"someone","sub":"x"}"#)
        #expect(rejection("\"" + unknownJWS + "\"")?.detail == "a JWS of no known payload; payload keys: iss, sub")
    }

    @Test func unknownSourceIsUnrecognized() {
        let rejected = rejection(#"{"source":"amazon.appstore","body":{"receiptId":"x"}}"#)
        #expect(rejected?.reason == .unrecognized)
        #expect(rejected?.detail == #"unknown envelope source "amazon.appstore""#)
    }

    @Test func badEnvelopeFieldsAreInvalidPayload() {
        #expect(rejection(#"{"received_at":"yesterday","body":\#(StorePayloads.rtdn)}"#)?.reason == .invalidPayload)
        #expect(rejection(#"{"received_at":true,"body":\#(StorePayloads.rtdn)}"#)?.reason == .invalidPayload)
        #expect(rejection(#"{"purchase_token":{"a":1},"body":\#(StorePayloads.rtdn)}"#)?.reason == .invalidPayload)
        #expect(rejection(#"{"body":null}"#)?.reason == .invalidPayload)
        #expect(rejection(#"{"body":[1]}"#)?.reason == .invalidPayload)
        #expect(rejection(#"{"source":7,"body":{}}"#)?.reason == .invalidPayload)
        #expect(rejection(#"{"signedPayload":12}"#)?.reason == .invalidPayload)
    }

    @Test func receivedAtSpellings() {
        func millis(_ value: JSON) -> Millis? { RecordParser.receivedAt(value)?.millis }
        #expect(millis(.number("1709294400000")) == 1_709_294_400_000)
        #expect(millis(.string("1709294400000")) == 1_709_294_400_000)
        #expect(millis(.string("2024-03-01T12:00:00Z")) == 1_709_294_400_000)
        #expect(millis(.string("2024-03-01T12:00:00.123456Z")) == 1_709_294_400_123)
        #expect(millis(.string("2024-03-01T07:00:00-05:00")) == 1_709_294_400_000)
        #expect(millis(.string("2024-03-01")) == nil)
        #expect(millis(.bool(true)) == nil)
        #expect(RecordParser.receivedAt(.number("1709294400000"))?.inSeconds == false)
    }

    /// inputs.md: "An epoch number below 10^11 is in seconds". Python's `time.time()` logs `1756200000.123456`,
    /// `date +%s` logs `1756200000`; read as milliseconds they would be 1970-01-21.
    @Test func receivedAtInEpochSecondsIsReadAsSeconds() throws {
        let seconds: [(JSON, Millis)] = [
            (.number("1756200000"), 1_756_200_000_000),
            (.number("1756200000.123456"), 1_756_200_000_123),
            (.string("1756200000.5"), 1_756_200_000_500),
            (.number("1.7562e9"), 1_756_200_000_000),
            (.number("99999999999"), 99_999_999_999_000),
        ]
        for (value, expected) in seconds {
            let time = try #require(RecordParser.receivedAt(value), "\(value)")
            #expect(time.millis == expected, "\(value)")
            #expect(time.inSeconds, "\(value)")
        }
        // 10^11 and above is milliseconds (1973-03-03 onwards); a fraction of a millisecond is dropped.
        #expect(RecordParser.receivedAt(.number("100000000000"))?.inSeconds == false)
        #expect(RecordParser.receivedAt(.number("1756200000123.9"))?.millis == 1_756_200_000_123)
        #expect(RecordParser.receivedAt(.number("1.7562e12"))?.millis == 1_756_200_000_000)

        let record = try parsed(#"{"received_at":1756200000,"body":\#(StorePayloads.rtdn)}"#)
        #expect(record.envelope.receivedAt == 1_756_200_000_000)
        #expect(record.receivedAtInSeconds)
        #expect(try parsed(#"{"received_at":"2025-08-26T09:20:00Z","body":\#(StorePayloads.rtdn)}"#).receivedAtInSeconds == false)
    }

    /// Issue 18: an envelope time at the edge of Int64 once bricked a ledger. Every envelope time must lie between
    /// 2008-01-01 and the run's clock + 10 years (PlausibleTimes), else the record is quarantined naming the field.
    @Test func implausibleEnvelopeTimesAreQuarantined() throws {
        for value in ["-9223372036854775808", "9223372036854775807", "99999999999999999999999", "0", "1",
                      "\"1999-12-31T23:59:59Z\"", "\"9999-12-31T23:59:59Z\"", "1e300", "-1756200000"] {
            let rejected = rejection(#"{"received_at":\#(value),"body":\#(StorePayloads.rtdn)}"#)
            #expect(rejected?.reason == .implausibleTimestamp, "\(value)")
            #expect(rejected?.detail.contains("received_at") == true, "\(value)")
        }
        // The edges themselves: 2008-01-01T00:00:00Z and the clock + 10 years are plausible.
        #expect(try parsed(#"{"received_at":"2008-01-01T00:00:00Z","body":\#(StorePayloads.rtdn)}"#).envelope.receivedAt == PlausibleTimes.storesOpened)
        #expect(rejection(#"{"received_at":"2007-12-31T23:59:59.999Z","body":\#(StorePayloads.rtdn)}"#)?.reason == .implausibleTimestamp)
        #expect(try parsed(#"{"received_at":\#(testTimes.latest),"body":\#(StorePayloads.rtdn)}"#).envelope.receivedAt == testTimes.latest)
        #expect(rejection(#"{"received_at":\#(testTimes.latest + 1),"body":\#(StorePayloads.rtdn)}"#)?.reason == .implausibleTimestamp)
        // A Pub/Sub publishTime stands in for received_at only when plausible: an implausible one is not used, and
        // the notification is dated by its own event time (as in a pull response).
        let push = StorePayloads.pubSubPush.replacingOccurrences(of: "2024-03-01T12:00:01.456Z", with: "1970-01-01T00:00:00Z")
        #expect(try parsed(push).envelope.receivedAt == nil)
        #expect(try parsed(StorePayloads.pubSubPush).envelope.receivedAt == RFC3339.millis("2024-03-01T12:00:01.456Z"))
    }
}
