import Facts
import Testing
@testable import PlayStore

/// Typed Google facts and their rows: every case survives the ledger's generic columns unchanged, and the rows
/// keep the layout `GoogleFactKind` documents.
@Suite struct GoogleFactCodecTests {
    static let grace = GoogleSubscriptionState(version: 1, state: GoogleSubscriptionState.inGracePeriod, paymentState: 0,
                                               cancelReason: nil)
    static let offered: GoogleSubscriptionState = {
        var state = GoogleSubscriptionState(version: 1, state: GoogleSubscriptionState.active, paymentState: 1, cancelReason: nil)
        state.introductoryOffer = GoogleSubscriptionState.IntroductoryOffer(micros: 990_000, cycles: 3)
        return state
    }()
    static let facts: [GoogleFact] = [
        .state(GoogleFact.Snapshot(token: "tok-1", at: 1_709_300_000_000, order: "GPA.3372-8841-2214-50781..2",
                                   expiry: 1_712_000_000_000, state: grace, productId: "premium_monthly",
                                   priceMicros: 4_990_000, currency: "EUR", trial: false, introductory: true,
                                   autoRenewing: true, inferred: true)),
        .start(token: "tok-1", at: 1_704_000_000_000, productId: "premium_monthly"),
        .cancel(token: "tok-1", at: 1_709_000_000_000, reason: 1),
        .pause(token: "tok-1", at: 1_709_300_000_000, resumeAt: 1_711_000_000_000),
        .voided(token: "tok-1", at: 1_709_400_000_000, order: "GPA.3372-8841-2214-50781", refundType: 2, quantity: 1),
        .voided(token: "tok-2", at: 1_709_400_000_000, order: nil, refundType: nil, quantity: nil),
        .event(token: "tok-1", at: 1_709_300_000_000, type: 20, productId: "premium_monthly"),
        .oneTimeEvent(token: "tok-3", at: 1_709_300_000_000, type: 1, productId: "coins_100"),
        .oneTime(token: "tok-3", at: 1_709_300_000_000, order: "GPA.1111-2222-3333-44444", purchaseState: 0,
                 quantity: 3, productId: "coins_100", currency: "USD"),
        .oneTime(token: "tok-5", at: 1_709_300_000_000, order: nil, purchaseState: nil, quantity: 1,
                 productId: "coins_100", currency: nil),
        .link(token: "tok-2", at: 1_709_300_000_000, from: "tok-1"),
        .user(token: "tok-1", at: 1_704_000_000_000, id: "user-9"),
        .testPurchase(token: "tok-4", at: 1_704_000_000_000),
        .state(GoogleFact.Snapshot(token: "tok-6", at: 1_709_300_000_000, order: "GPA.3372-8841-2214-50782..0",
                                   expiry: 1_712_000_000_000, state: offered, productId: "premium_monthly",
                                   priceMicros: 990_000, currency: "USD", introductory: true, offer: true)),
        .state(GoogleFact.Snapshot(token: "tok-7", at: 1_709_300_000_000, order: "GPA.3372-8841-2214-50783",
                                   expiry: 1_712_000_000_000, state: offered, productId: "premium_monthly",
                                   priceMicros: 9_990_000, currency: "USD", paidOrder: true, prorated: true)),
        .oneTime(token: "tok-8", at: 1_709_300_000_000, order: nil, purchaseState: 0, quantity: 1,
                 productId: "coins_100", currency: "USD", free: true),
    ]

    @Test(arguments: facts)
    func everyFactReadsBackAsWritten(_ fact: GoogleFact) {
        let row = GoogleFactCodec.encode(fact, observedAt: 1_709_300_000_000)
        #expect(row.platform == .google && row.observedAt == 1_709_300_000_000)
        #expect(GoogleFactCodec.decode(row) == fact)
    }

    @Test func rowsKeepTheDocumentedLayout() {
        let state = GoogleFactCodec.encode(Self.facts[0], observedAt: 0)
        #expect(state.kind == GoogleFactKind.state && state.detail == "v1;SUBSCRIPTION_STATE_IN_GRACE_PERIOD;pay=0;cancel=")
        #expect(state.flags == [.introductory, .on, .inferred] && state.ref == "GPA.3372-8841-2214-50781..2")
        #expect(GoogleFactCodec.encode(Self.facts[13], observedAt: 0).detail == "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=;intro=990000x3")
        #expect(GoogleFactCodec.encode(Self.facts[14], observedAt: 0).flags == [.paidOrder, .prorated])
        #expect(GoogleFactCodec.encode(Self.facts[15], observedAt: 0).flags == [.free])
        #expect(GoogleSubscriptionState(code: "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=;intro=990000x3")?.introductoryOffer?.cycles == 3)
        #expect(GoogleSubscriptionState(code: "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=;intro=x3") == nil)
        #expect(GoogleSubscriptionState(code: "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=;other=1") == nil)
        let event = GoogleFactCodec.encode(Self.facts[6], observedAt: 0)
        #expect(event.kind == GoogleFactKind.event && event.detail == "20")
        let link = GoogleFactCodec.encode(Self.facts[10], observedAt: 0)
        #expect(link.kind == .link && link.subject == "tok-2" && link.ref == "tok-1")
        #expect(GoogleFactCodec.encode(Self.facts[4], observedAt: 0).detail == "2;quantity=1")
        #expect(GoogleFactCodec.encode(Self.facts[5], observedAt: 0).detail == nil)
        #expect(GoogleFactCodec.encode(Self.facts[8], observedAt: 0).detail == "0;quantity=3")
        #expect(GoogleFactCodec.encode(Self.facts[9], observedAt: 0).detail == nil)
    }

    /// Quantified codes as rows of ledgers before quantities were kept wrote them (the bare enum value) and as
    /// they are written now; anything else is refused, so that the row is skipped instead of misread.
    @Test func quantifiedCodesReadBackAndMalformedOnesAreRefused() {
        #expect(QuantifiedCode(code: nil) == QuantifiedCode(value: nil, quantity: nil))
        #expect(QuantifiedCode(code: "0") == QuantifiedCode(value: 0, quantity: nil))
        #expect(QuantifiedCode(code: "7") == QuantifiedCode(value: 7, quantity: nil))
        #expect(QuantifiedCode(code: "2;quantity=4") == QuantifiedCode(value: 2, quantity: 4))
        #expect(QuantifiedCode(code: ";quantity=2") == QuantifiedCode(value: nil, quantity: 2))
        for malformed in ["x", "0;", "0;quantity=", "0;quantity=0", "0;quantity=-1", "0;qty=2", "0;quantity=2;x"] {
            #expect(QuantifiedCode(code: malformed) == nil, "\(malformed)")
        }
    }

    @Test func rowsOfOtherKindsOrUnreadableStatesAreNotGooglesFacts() {
        #expect(GoogleFactCodec.decode(Fact(platform: .google, subject: "t", kind: GoogleFactKind.state, at: 0, observedAt: 0,
                                            detail: "not a state code")) == nil)
        #expect(GoogleFactCodec.decode(Fact(platform: .google, subject: "t", kind: "period", at: 0, observedAt: 0)) == nil)
        #expect(GoogleFactCodec.decode(Fact(platform: .apple, subject: "t", kind: GoogleFactKind.start, at: 0, observedAt: 0)) == nil)
    }

    /// State codes as the translators write them, v1 and v2, with absent numbers and a state name Google may add
    /// later (kept verbatim, whatever its characters), read back; anything else is not a state.
    @Test func stateCodesReadBackAndMalformedOnesAreRefused() {
        let states = [
            GoogleSubscriptionState(version: 2, state: GoogleSubscriptionState.canceled, paymentState: nil, cancelReason: 0),
            GoogleSubscriptionState(version: 1, state: GoogleSubscriptionState.onHold, paymentState: 0, cancelReason: nil),
            GoogleSubscriptionState(version: 2, state: "SUBSCRIPTION_STATE_ÉTAT_NOUVEAU", paymentState: nil, cancelReason: nil),
            GoogleSubscriptionState(version: 12, state: "", paymentState: 3, cancelReason: 3),
        ]
        for state in states { #expect(GoogleSubscriptionState(code: state.code) == state) }
        #expect(states[0].code == "v2;SUBSCRIPTION_STATE_CANCELED;pay=;cancel=0")
        for code in ["", "v2", "x2;S;pay=;cancel=", "v;S;pay=;cancel=", "v2;S;pay=;cancel=;", "v2;S;paid=1;cancel=",
                     "v2;S;pay=1;reason=", "v2;S;pay=1"] {
            #expect(GoogleSubscriptionState(code: code) == nil, "\(code)")
        }
        #expect(GoogleSubscriptionState(code: "v2;S;pay=x;cancel=7")
                    == GoogleSubscriptionState(version: 2, state: "S", paymentState: nil, cancelReason: 7))
    }
}
