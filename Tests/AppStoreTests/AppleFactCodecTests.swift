import AppStore
import Facts
import Testing

/// Typed Apple facts and their rows: every case survives the ledger's generic columns unchanged, and the rows
/// keep the layout `AppleFactKind` documents (ledgers written before the typed facts read the same).
@Suite struct AppleFactCodecTests {
    static let facts: [AppleFact] = [
        .period(AppleFact.Period(subject: "5000", transactionId: "5002", start: 1_706_700_000_000, end: 1_709_200_000_000,
                                 productId: "premium_monthly", webOrderLineItemId: "31000000007", priceMicros: 4_990_000,
                                 currency: "USD", offer: .introductory, upgraded: true)),
        .period(AppleFact.Period(subject: "5000", transactionId: "5000", start: 1_704_000_000_000, end: 1_704_604_800_000,
                                 productId: "premium_monthly", offer: .freeTrial)),
        .oneTime(AppleFact.OneTime(transactionId: "7001", purchasedAt: 1_706_000_000_000, productId: "coins_100",
                                   priceMicros: 990_000, currency: "EUR")),
        .revocation(AppleFact.Revocation(subject: "5000", transactionId: "5002", at: 1_707_000_000_000, share: 50_000,
                                         productId: "premium_monthly")),
        .refundReversed(AppleFact.RefundReversal(subject: "5000", transactionId: "5002", at: 1_708_000_000_000,
                                                 productId: "premium_monthly")),
        .renewalStatus(AppleFact.RenewalStatus(subject: "5000", at: 1_708_100_000_000, autoRenew: false,
                                               productId: "premium_yearly")),
        .renewalStatus(AppleFact.RenewalStatus(subject: "5000", at: 1_708_200_000_000, autoRenew: true)),
        .billingIssue(AppleFact.BillingIssue(subject: "5000", at: 1_709_200_000_000, graceEnd: 1_710_500_000_000,
                                             statedBy: "DID_FAIL_TO_RENEW")),
        .expiry(AppleFact.Expiry(subject: "5000", at: 1_709_200_000_000, reason: .priceIncrease, periodEnd: 1_709_200_000_000)),
        .expiry(AppleFact.Expiry(subject: "5000", at: 1_709_300_000_000, reason: .unknown("7"))),
        .currency(subject: "5000", at: 1_706_700_000_000, code: "USD"),
        .user(subject: "5000", at: 1_706_700_000_000, id: "7e3fb20b-4cdb-47cc-936d-99d65f608138"),
        .oneTime(AppleFact.OneTime(transactionId: "7002", purchasedAt: 1_706_000_000_000, productId: "coins_100",
                                   priceMicros: 2_970_000, currency: "EUR", quantity: 3)),
    ]

    @Test(arguments: facts)
    func everyFactReadsBackAsWritten(_ fact: AppleFact) {
        let row = AppleFactCodec.encode(fact, observedAt: 1_709_300_000_000)
        #expect(row.platform == .apple && row.observedAt == 1_709_300_000_000 && row.at == fact.at)
        #expect(AppleFactCodec.decode(row) == fact)
    }

    @Test func rowsKeepTheDocumentedLayout() {
        let revocation = AppleFactCodec.encode(Self.facts[3], observedAt: 0)
        #expect(revocation.kind == AppleFactKind.revocation && revocation.ref == "5002" && revocation.detail == "50000")
        let period = AppleFactCodec.encode(Self.facts[0], observedAt: 0)
        #expect(period.flags == [.introductory, .upgraded] && period.amountMicros == 4_990_000 && period.detail == "31000000007")
        let expiry = AppleFactCodec.encode(Self.facts[8], observedAt: 0)
        #expect(expiry.detail == "price_increase" && expiry.end == 1_709_200_000_000)
        let status = AppleFactCodec.encode(Self.facts[6], observedAt: 0)
        #expect(status.kind == AppleFactKind.renewalStatus && status.flags == .on)
        #expect(AppleFactCodec.encode(Self.facts[2], observedAt: 0).detail == nil)
        #expect(AppleFactCodec.encode(Self.facts[12], observedAt: 0).detail == "3")
    }

    @Test func rowsOfOtherKindsOrMissingFieldsAreNotApplesFacts() {
        #expect(AppleFactCodec.decode(Fact(platform: .apple, subject: "5000", kind: "link", at: 0, observedAt: 0, ref: "x")) == nil)
        #expect(AppleFactCodec.decode(Fact(platform: .apple, subject: "5000", kind: AppleFactKind.period, at: 0, observedAt: 0)) == nil)
        let google = Fact(platform: .google, subject: "tok", kind: AppleFactKind.user, at: 0, observedAt: 0, ref: "u")
        #expect(AppleFactCodec.decode(google) == nil)
        for quantity in ["0", "-2", "two"] {
            #expect(AppleFactCodec.decode(Fact(platform: .apple, subject: "7002", kind: AppleFactKind.oneTime, at: 0,
                                               observedAt: 0, ref: "7002", detail: quantity)) == nil)
        }
    }
}
