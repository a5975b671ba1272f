import AppStore
import Facts
import Foundation
import Ingest
import Testing

@Suite struct JWSVerifierTests {
    // MARK: Apple's signed test vectors

    @Test func acceptsApplesTestVectors() throws {
        let verifier = try JWSVerifier(trustedRoots: [try vectorRoot()])
        let notification = try verifier.verify(try vector("mock_signed_data/testNotification"))
        #expect(notification.payload["notificationType"]?.string == "TEST")
        #expect(notification.payload["signedDate"]?.int64 == 1_681_314_324_000)
        #expect(notification.payload["data", "bundleId"]?.string == "com.example")
        let transaction = try verifier.verify(try vector("mock_signed_data/transactionInfo"))
        #expect(transaction.payload["bundleId"]?.string == "com.example")
        let renewal = try verifier.verify(try vector("mock_signed_data/renewalInfo"))
        #expect(renewal.payload["environment"]?.string == "Sandbox")
    }

    @Test func vectorsAreRejectedWithoutTheirRoot() throws {
        let verifier = try JWSVerifier(trustedRoots: AppStoreTranslator.appleRootCAG3)
        #expect(throws: JWSVerificationError.self) { try verifier.verify(try vector("mock_signed_data/transactionInfo")) }
    }

    @Test func vectorsTranslateAsSandboxOrTest() throws {
        let translator = try AppStoreTranslator(trustedRoots: [try vectorRoot()], bundleIds: ["com.example"], times: testTimes)
        let test = translator.translate(record(.appleNotificationV2, jws: try vector("mock_signed_data/testNotification")))
        #expect(test == .excluded(.test))
        let transaction = translator.translate(record(.appleTransaction, jws: try vector("mock_signed_data/transactionInfo")))
        #expect(transaction == .excluded(.sandbox))
        let renewal = translator.translate(record(.appleRenewalInfo, jws: try vector("mock_signed_data/renewalInfo")))
        #expect(renewal == .excluded(.sandbox))
    }

    @Test func wrongBundleIsRejectedOnlyWhenBundleIdsAreGiven() throws {
        // This vector has no signedDate: its chain is checked at the time the backend logged it.
        let logged = Envelope(receivedAt: 1_681_314_324_000)
        let strict = try AppStoreTranslator(trustedRoots: [try vectorRoot()], bundleIds: ["com.example"], times: testTimes)
        let wrong = strict.translate(record(.appleNotificationV2, jws: try vector("mock_signed_data/wrongBundleId"), envelope: logged))
        #expect(wrong.quarantineReason == .wrongBundle)
        let open = try AppStoreTranslator(trustedRoots: [try vectorRoot()], bundleIds: [], times: testTimes)
        // Its signature is valid; it is a TEST notification.
        #expect(open.translate(record(.appleNotificationV2, jws: try vector("mock_signed_data/wrongBundleId"), envelope: logged)) == .excluded(.test))
    }

    @Test func aJWSWithNoTimeToCheckItsChainAtIsRejected() throws {
        // Checking at "now" would make the outcome depend on the day ingest runs.
        let open = try AppStoreTranslator(trustedRoots: [try vectorRoot()], bundleIds: [], times: testTimes)
        let unlogged = open.translate(record(.appleNotificationV2, jws: try vector("mock_signed_data/wrongBundleId")))
        #expect(unlogged.quarantineReason == .badSignature)
    }

    /// A header that is not base64url JSON is only read by the verifier (the parser looks at the payload): the
    /// record is a forgery like any other, quarantined as `bad_signature`, not accepted and not cached.
    @Test func anUndecodableHeaderIsABadSignature() throws {
        let genuine = try vector("mock_signed_data/wrongBundleId")
        let parts = genuine.split(separator: ".", omittingEmptySubsequences: false)
        let forged = Base64URL.encode(Array("not json".utf8)) + "." + parts[1] + "." + parts[2]
        let verifier = try JWSVerifier(trustedRoots: [try vectorRoot()])
        #expect(throws: JWSVerificationError.malformed("header is not base64url JSON")) {
            try verifier.verify(forged, unsignedDateFallback: 1_700_000_000_000)
        }
        let logged = Envelope(receivedAt: 1_681_314_324_000)
        let translator = try AppStoreTranslator(trustedRoots: [try vectorRoot()], bundleIds: [], times: testTimes)
        let result = translator.translate(record(.appleNotificationV2, jws: forged, envelope: logged))
        #expect(result.quarantineReason == .badSignature)
        // The genuine header still verifies after the forged one was rejected.
        #expect(translator.translate(record(.appleNotificationV2, jws: genuine, envelope: logged)) == .excluded(.test))
    }

    @Test func missingX5CIsRejected() throws {
        let verifier = try JWSVerifier(trustedRoots: [try vectorRoot()])
        #expect(throws: JWSVerificationError.missingX5C) {
            try verifier.verify(try vector("mock_signed_data/missingX5CHeaderClaim"))
        }
        let translator = try AppStoreTranslator(trustedRoots: [try vectorRoot()], bundleIds: ["com.example"], times: testTimes)
        let result = translator.translate(record(.appleNotificationV2, jws: try vector("mock_signed_data/missingX5CHeaderClaim")))
        #expect(result.quarantineReason == .badSignature)
    }

    @Test func embeddedAppleRootParses() throws {
        #expect(AppStoreTranslator.appleRootCAG3.count == 1)
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: sharedPath("certs/AppleRootCA-G3.cer"))))
        #expect(AppStoreTranslator.appleRootCAG3[0] == file)
        _ = try JWSVerifier(trustedRoots: AppStoreTranslator.appleRootCAG3)
    }

    @Test func unparsableRootThrows() {
        #expect(throws: AppStoreError.self) { try JWSVerifier(trustedRoots: [[0x30, 0x03, 0x02, 0x01, 0x01]]) }
    }

    // MARK: Our own chains

    static let payload = #"{"transactionId":"1","signedDate":1709280000000,"bundleId":"com.example"}"#

    @Test func forgedChainIsRejectedUnlessItsRootIsTrusted() throws {
        let chain = try TestChain()
        let jws = try chain.sign(Self.payload)
        let apple = try JWSVerifier(trustedRoots: AppStoreTranslator.appleRootCAG3)
        #expect(throws: JWSVerificationError.self) { try apple.verify(jws) }
        let trusting = try JWSVerifier(trustedRoots: [chain.rootDER])
        #expect(try trusting.verify(jws).payload["transactionId"]?.string == "1")
        // A second payload on the cached chain is still checked.
        #expect(try trusting.verify(try chain.sign(Self.payload)).payload["bundleId"]?.string == "com.example")
    }

    @Test func oneVerifierServesConcurrentCallers() async throws {
        let chain = try TestChain()
        let verifier = try JWSVerifier(trustedRoots: [chain.rootDER])
        let good = try chain.sign(Self.payload)
        let forged = try TestChain().sign(Self.payload)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask { (try? verifier.verify(index.isMultiple(of: 2) ? good : forged)) != nil }
            }
            var accepted = 0
            for await ok in group where ok { accepted += 1 }
            return accepted
        }
        #expect(results == 8)
    }

    @Test func leafValidityIsCheckedAtSignedDateNotNow() throws {
        // The leaf expired in 2025; the payload was signed 2024-03-01, inside its validity.
        let chain = try TestChain(leafValidity: TestChain.date(2023)...TestChain.date(2025))
        let verifier = try JWSVerifier(trustedRoots: [chain.rootDER])
        #expect(throws: Never.self) { try verifier.verify(try chain.sign(Self.payload)) }
        // Same (now cached) chain, signed after the leaf expired.
        let late = #"{"transactionId":"2","signedDate":1767225600000}"#
        #expect(throws: JWSVerificationError.self) { try verifier.verify(try chain.sign(late)) }
        // And a fresh verifier (no cache) rejects it as well.
        let fresh = try JWSVerifier(trustedRoots: [chain.rootDER])
        #expect(throws: JWSVerificationError.self) { try fresh.verify(try chain.sign(late)) }
    }

    @Test func missingMarkerOIDsAreRejected() throws {
        let chain = try TestChain(markers: false)
        let verifier = try JWSVerifier(trustedRoots: [chain.rootDER])
        #expect(throws: JWSVerificationError.self) { try verifier.verify(try chain.sign(Self.payload)) }
    }

    @Test func tamperedPayloadIsRejected() throws {
        let chain = try TestChain()
        let verifier = try JWSVerifier(trustedRoots: [chain.rootDER])
        let jws = try chain.sign(Self.payload)
        let parts = jws.split(separator: ".").map(String.init)
        let forged = Base64URL.encode(Array(Self.payload.replacingOccurrences(of: "\"1\"", with: "\"9\"").utf8))
        let tampered = [parts[0], forged, parts[2]].joined(separator: ".")
        #expect(throws: JWSVerificationError.self) { try verifier.verify(tampered) }
        #expect(throws: Never.self) { try verifier.verify(jws) }
    }

    @Test func foreignRootInX5CIsRejected() throws {
        let chain = try TestChain()
        let stranger = try TestChain()
        let verifier = try JWSVerifier(trustedRoots: [chain.rootDER])
        let x5c = [chain.leafDER, chain.intermediateDER, stranger.rootDER].map { "\"\(Data($0).base64EncodedString())\"" }
        let header = "{\"alg\":\"ES256\",\"x5c\":[\(x5c.joined(separator: ","))]}"
        #expect(throws: JWSVerificationError.self) { try verifier.verify(try chain.sign(Self.payload, header: header)) }
    }

    @Test func otherAlgorithmsAndShortChainsAreRejected() throws {
        let chain = try TestChain()
        let verifier = try JWSVerifier(trustedRoots: [chain.rootDER])
        let none = try chain.sign(Self.payload, header: #"{"alg":"none"}"#)
        #expect(throws: JWSVerificationError.unsupportedAlgorithm("none")) { try verifier.verify(none) }
        let leafOnly = "{\"alg\":\"ES256\",\"x5c\":[\"\(Data(chain.leafDER).base64EncodedString())\"]}"
        #expect(throws: JWSVerificationError.self) { try verifier.verify(try chain.sign(Self.payload, header: leafOnly)) }
    }
}
