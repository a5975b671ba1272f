/// Turns simulated subscriptions into the records a backend would have archived, routes each record to its
/// output file, adds the noise real archives carry (redeliveries, late records, escaped bodies, double
/// logging) and counts what a correct ingest must report for each record.
///
/// Output files (relative to `archives/`):
/// - `daily/YYYY-MM-DD.ndjson.gz`: verifyReceipt envelopes, RTDN Pub/Sub pushes, Google resource envelopes
/// - `apple-notifications/YYYY-MM/YYYY-MM-DD.tar.gz`: raw App Store Server Notification bodies (V1, V2 signed)
/// - `google-play/YYYY-MM.zip`: JSON arrays of voided purchases, one-time products and test purchases
/// - `backend/YYYY-MM.jsonl`: sandbox receipts and records the backend logged a second time
///
/// Wild data (issue 13), as real archives carry it:
/// - license testers' Google purchases (subscriptions and one-time products): their RTDNs are pushed like any
///   other, in the daily files, while the resource that says "test" is in the Play zip (read after them) or in
///   the same daily file (before or after them): every record of such a token is excluded (`test`);
/// - resources logged without `received_at` (a backfill job that kept no time) after renewals;
/// - `received_at` written in epoch seconds (`warnings.timestamps_in_seconds`);
/// - Pub/Sub message ids reused by another message (merged exports; `warnings.message_id_conflicts`).
struct RecordEmitter {
    let catalog: Catalog
    let appleCutover: Int64
    let googleCutover: Int64
    let horizon: Int64
    let chain: AppleSigningChain
    var spool: RecordSpool
    var tally = IngestTally()
    /// Days (`YYYY-MM-DD`) whose daily file holds something other than used records and redeliveries.
    var specialDays: Set<String> = []
    private var rng: SeededGenerator
    private var messageCounter: Int64 = 4_000_000_000_000_000
    private var notificationCounter = 0
    /// Apple subscriptions kept to forge fake refunds about (first few seen after the V2 cut-over).
    private(set) var forgeryTargets: [SimulatedSubscription] = []

    init(catalog: Catalog, appleCutover: Int64, googleCutover: Int64, horizon: Int64, chain: AppleSigningChain,
         spool: RecordSpool, seed: UInt64) {
        self.catalog = catalog
        self.appleCutover = appleCutover
        self.googleCutover = googleCutover
        self.horizon = horizon
        self.chain = chain
        self.spool = spool
        self.rng = SeededGenerator(seed: seed, stream: 0xA5C1_1E5)
    }

    private static let second: Int64 = 1000

    private func dailyKey(_ at: Int64) -> String { "daily/\(UTCCalendar.day(min(at, horizon))).ndjson.gz" }

    /// Writes a line and counts its outcome; `inSeconds`: the line is an envelope whose `received_at` is in
    /// epoch seconds, a warning once per distinct record (its copies are duplicates).
    private mutating func write(_ key: String, _ line: String, _ outcome: IngestTally.Outcome,
                                inSeconds: Bool = false) throws(RecordSpool.SpoolError) {
        try spool.append(key, line)
        tally.count(outcome)
        switch outcome {
        case .used, .excluded: if inSeconds { tally.warn(IngestTally.timestampsInSeconds) }
        case .duplicate, .quarantined: break
        }
    }

    /// A record as a backend logs it: the line, and whether its `received_at` is in epoch seconds.
    struct Logged {
        var line: String
        var inSeconds: Bool
    }

    /// An envelope as a backend logs it; the body sometimes as an escaped JSON string. `received_at` is RFC 3339,
    /// sometimes epoch milliseconds, sometimes epoch seconds (Python's `time.time()`, `date +%s`); `nil` leaves
    /// it out (a backfill that kept no time).
    private mutating func envelope(receivedAt: Int64?, source: String, context: [(String, JSONValue)],
                                   body: JSONValue) -> Logged {
        var members: [(String, JSONValue)] = []
        var inSeconds = false
        if let receivedAt {
            let roll = rng.next() % 100
            if roll < 10 {
                members.append(("received_at", .int(receivedAt)))
            } else if roll < 16, receivedAt % 1000 == 0 {
                inSeconds = true
                let seconds = String(receivedAt / 1000)
                members.append(("received_at", roll < 13 ? .number(seconds) : roll < 15 ? .number(seconds + ".0") : .string(seconds)))
            } else {
                members.append(("received_at", .string(UTCCalendar.rfc3339(receivedAt))))
            }
        }
        let escaped = rng.chance(0.1)
        let value = JSONValue.object(members + [("source", .string(source))] + context
                                     + [("body", escaped ? .string(body.serialized) : body)])
        return Logged(line: value.serialized, inSeconds: inSeconds)
    }

    /// Writes to a daily file: usually the event's day, sometimes a few days late.
    private mutating func writeDaily(_ at: Int64, _ record: Logged, _ outcome: IngestTally.Outcome = .used) throws(RecordSpool.SpoolError) {
        let late = rng.chance(0.03) ? rng.int(1...4) * 86_400_000 : 0
        try write(dailyKey(at + late), record.line, outcome, inSeconds: record.inSeconds)
    }

    // MARK: - Apple

    mutating func emitApple(_ subscription: SimulatedSubscription) throws(RecordSpool.SpoolError) {
        let payloads = ApplePayloads(catalog: catalog, subscription: subscription, chain: chain,
                                     numericQuantity: rng.chance(0.3), zeroCancellationDate: rng.chance(0.4))
        let storefront = (Catalog.storefronts[subscription.currency] ?? ("USA", "143441", "US")).apple
        let context: [(String, JSONValue)] = [("app_user_id", .string(subscription.userId)),
                                              ("currency", .string(subscription.currency)),
                                              ("storefront", .string(storefront))]
        var seenReceipts: Set<String> = []
        if !subscription.isTest, forgeryTargets.count < 8,
           subscription.timeline.periods.contains(where: { !$0.trial && $0.start > appleCutover && $0.revokedAt == nil }) {
            forgeryTargets.append(subscription)
        }

        for event in subscription.events where event.at <= horizon {
            let at = event.at
            if subscription.isTest {
                switch event.kind {
                case .purchase, .renewal:
                    let body = payloads.verifyReceipt(at: at + 30 * RecordEmitter.second, environment: "Sandbox")
                    let record = envelope(receivedAt: at + 30 * RecordEmitter.second, source: "apple.verify_receipt",
                                          context: context, body: body)
                    try write("backend/\(UTCCalendar.month(at)).jsonl", record.line, .excluded("sandbox"), inSeconds: record.inSeconds)
                default: break
                }
                continue
            }
            let v1 = at < appleCutover
            var receipt = false
            var notification: (v1: String?, v2: String?, subtype: String?, reason: String, period: TimelinePeriod?)
                = (nil, nil, nil, "RENEWAL", payloads.currentPeriod(at: at))
            let periods = subscription.timeline.periods
            switch event.kind {
            case .purchase(let p):
                notification = ("INITIAL_BUY", "SUBSCRIBED", "INITIAL_BUY", "PURCHASE", periods[p]); receipt = true
            case .renewal(let p):
                notification = ("DID_RENEW", "DID_RENEW", nil, "RENEWAL", periods[p]); receipt = rng.chance(0.4)
            case .autoRenewOff:
                notification.v1 = "DID_CHANGE_RENEWAL_STATUS"; notification.v2 = "DID_CHANGE_RENEWAL_STATUS"
                notification.subtype = "AUTO_RENEW_DISABLED"; receipt = rng.chance(0.3)
            case .autoRenewOn:
                notification.v1 = "DID_CHANGE_RENEWAL_STATUS"; notification.v2 = "DID_CHANGE_RENEWAL_STATUS"
                notification.subtype = "AUTO_RENEW_ENABLED"; receipt = rng.chance(0.3)
            case .billingFailed(let e):
                let hasGrace = subscription.timeline.episodes[e].graceEnd > subscription.timeline.episodes[e].start
                notification.v1 = "DID_FAIL_TO_RENEW"; notification.v2 = "DID_FAIL_TO_RENEW"
                notification.subtype = hasGrace ? "GRACE_PERIOD" : nil; receipt = true
            case .graceExpired:
                notification.v2 = "GRACE_PERIOD_EXPIRED"
            case .recovered(_, let p):
                notification = ("DID_RECOVER", "DID_RENEW", "BILLING_RECOVERY", "RENEWAL", periods[p]); receipt = true
            case .billingLost:
                notification.v2 = "EXPIRED"; notification.subtype = "BILLING_RETRY"
            case .expired:
                notification.v2 = "EXPIRED"; notification.subtype = "VOLUNTARY"
            case .refund(let p):
                notification = ("CANCEL", "REFUND", nil, "RENEWAL", periods[p]); receipt = true
            case .upgrade(_, let to):
                notification = ("INTERACTIVE_RENEWAL", "DID_CHANGE_RENEWAL_PREF", "UPGRADE", "PURCHASE", periods[to])
                receipt = true
            case .resubscribe(let p):
                notification = ("INTERACTIVE_RENEWAL", "SUBSCRIBED", "RESUBSCRIBE", "PURCHASE", periods[p]); receipt = true
            case .oneTime:
                receipt = true
            case .pauseScheduled, .paused, .resumed:
                break
            }
            if v1, let type = notification.v1 {
                let body = payloads.notificationV1(type: type, at: at, originalIdAsNumber: rng.chance(0.3))
                try writeNotification(at: at, name: "v1-\(notificationCounter)", body: body, outcome: .used)
            } else if !v1, let type = notification.v2, let period = notification.period {
                let body = payloads.notificationV2(type: type, subtype: notification.subtype, at: at, period: period,
                                                   uuid: rng.uuid(), reason: notification.reason, chain: chain)
                try writeNotification(at: at, name: "v2-\(notificationCounter)", body: body, outcome: .used)
            }
            if receipt {
                let loggedAt = at + rng.int(20...90) * RecordEmitter.second
                let body = payloads.verifyReceipt(at: loggedAt)
                guard seenReceipts.insert(body.serialized).inserted else { continue }
                let record = envelope(receivedAt: loggedAt, source: "apple.verify_receipt", context: context, body: body)
                try writeDaily(at, record)
                if rng.chance(0.02) {
                    // The backend logged the same response twice (a retry): a duplicate in another file.
                    try write("backend/\(UTCCalendar.month(at)).jsonl", record.line, .duplicate)
                }
            }
        }
    }

    /// A raw notification body as a member of the month's tar; every fourth member gzipped.
    private mutating func writeNotification(at: Int64, name: String, body: JSONValue,
                                            outcome: IngestTally.Outcome) throws(RecordSpool.SpoolError) {
        notificationCounter += 1
        let member = "\(UTCCalendar.day(at))/\(name)" + (notificationCounter % 4 == 0 ? ".json.gz" : ".json")
        try write("apple-notifications/\(UTCCalendar.month(at))/\(UTCCalendar.day(at)).tar.gz",
                  member + "\t" + body.serialized, outcome)
    }

    /// Fake REFUND notifications about real subscriptions, signed by a chain that is not trusted.
    mutating func emitForgeries(count: Int, forgedChain: AppleSigningChain) throws(RecordSpool.SpoolError) {
        guard !forgeryTargets.isEmpty else { return }
        for index in 0..<count {
            let target = forgeryTargets[index % forgeryTargets.count]
            guard let period = target.timeline.periods.last(where: { !$0.trial && $0.start > appleCutover }) else { continue }
            let at = SubscriberGenerator.anchor(min(period.start + 2 * 86_400_000, horizon - 86_400_000))
            var forged = period
            forged.revokedAt = at
            var faked = target
            faked.timeline.periods = target.timeline.periods.map { $0.transactionId == period.transactionId ? forged : $0 }
            let fakePayloads = ApplePayloads(catalog: catalog, subscription: faked, chain: forgedChain,
                                             numericQuantity: false, zeroCancellationDate: false)
            let body = fakePayloads.notificationV2(type: "REFUND", subtype: nil, at: at, period: forged,
                                                   uuid: rng.uuid(), reason: "PURCHASE", chain: forgedChain)
            try writeNotification(at: at, name: "v2-\(notificationCounter)", body: body, outcome: .quarantined("bad_signature"))
            tally.forged += 1
        }
    }

    // MARK: - Google

    mutating func emitGoogle(_ subscription: SimulatedSubscription) throws(RecordSpool.SpoolError) {
        let payloads = GooglePayloads(catalog: catalog, subscription: subscription)
        var seenBodies: Set<String> = []
        let region = (Catalog.storefronts[subscription.currency] ?? ("USA", "143441", "US")).google
        for event in subscription.events where event.at <= horizon {
            let at = event.at
            let periods = subscription.timeline.periods
            var type: Int?
            var token = payloads.token(at: at)
            switch event.kind {
            case .purchase: type = 4
            case .renewal: type = 2
            case .autoRenewOff: type = 3
            case .autoRenewOn: type = 7
            case .billingFailed(let e):
                let episode = subscription.timeline.episodes[e]
                type = episode.graceEnd > episode.start ? 6 : 5
            case .graceExpired: type = 5
            case .recovered, .resumed: type = 1
            case .billingLost, .expired: type = 13
            case .refund(let p):
                type = 12
                if !subscription.isTest, let r = periods[p].revokedAt {
                    let body = GooglePayloads.voidedPurchase(token: periods[p].token, order: periods[p], voidedAt: r)
                    let record = envelope(receivedAt: r + 3_600_000, source: "google.voided_purchase",
                                          context: [("package_name", .string(GooglePayloads.packageName))], body: body)
                    try write("google-play/\(UTCCalendar.month(r)).zip",
                              "voided-\(UTCCalendar.day(r)).json\t" + record.line, .used, inSeconds: record.inSeconds)
                }
            case .upgrade(_, let to):
                type = 4
                token = periods[to].token
            case .pauseScheduled: type = 11
            case .paused: type = 10
            case .oneTime(let index):
                try emitGoogleOneTime(subscription, index: index, region: region)
                continue
            case .resubscribe:
                break
            }
            guard let type else { continue }
            let product = periods.last { $0.token == token && $0.start <= at }?.product ?? periods[0].product
            // A tester's notifications say nothing about testing: excluded only through the token's resource.
            let notification = payloads.subscriptionNotification(type: type, token: token, product: product, at: at,
                                                                 timeAsNumber: rng.chance(0.3))
            try writePush(notification, at: at, outcome: subscription.isTest ? .excluded("test") : .used)
            // The resource the backend fetched right after the notification.
            let fetchedAt = at + rng.int(3...50) * RecordEmitter.second
            let resume = subscription.events.last { e in
                if case .pauseScheduled = e.kind { return e.at <= at } else { return false }
            }.flatMap { e -> Int64? in if case .pauseScheduled(let r) = e.kind { return r } else { return nil } }
            let useV2 = at >= googleCutover && rng.chance(0.5)
            guard let body = useV2 ? payloads.resourceV2(token: token, at: at, scheduledResume: resume)
                                   : payloads.resourceV1(token: token, at: at, scheduledResume: resume),
                  seenBodies.insert(token + body.serialized).inserted else { continue }
            // After a plain renewal, a backfill job sometimes logged the resource without a time: it proves the
            // renewal order, which the pipeline must date from the resource itself.
            var bare = false
            if case .renewal = event.kind, !subscription.isTest { bare = rng.chance(0.12) }
            let record = envelope(receivedAt: bare ? nil : fetchedAt,
                                  source: useV2 ? "google.subscription.v2" : "google.subscription.v1",
                                  context: [("purchase_token", .string(token)), ("subscription_id", .string(product)),
                                            ("package_name", .string(GooglePayloads.packageName)),
                                            ("app_user_id", .string(subscription.userId))],
                                  body: body)
            if subscription.isTest, rng.chance(0.5) {
                try write("google-play/\(UTCCalendar.month(at)).zip",
                          "test-purchases-\(UTCCalendar.day(at)).json\t" + record.line, .excluded("test"), inSeconds: record.inSeconds)
            } else {
                try writeDaily(at, record, subscription.isTest ? .excluded("test") : .used)
            }
        }
    }

    private mutating func emitGoogleOneTime(_ subscription: SimulatedSubscription, index: Int,
                                            region: String) throws(RecordSpool.SpoolError) {
        let purchase = subscription.timeline.oneTimePurchases[index]
        let token = "otp\(index)" + subscription.timeline.id.prefix(20) + rng.hex(24)
        let orderId = (subscription.orderBases[subscription.timeline.id] ?? "GPA.33")
            .replacingOccurrences(of: "GPA.33", with: "GPA.44") + "-\(index)"
        let body = GooglePayloads.productPurchase(orderId: orderId, at: purchase.at, quantity: purchase.quantity, region: region,
                                                  test: subscription.isTest)
        let record = envelope(receivedAt: purchase.at + 10 * RecordEmitter.second, source: "google.product.v1",
                              context: [("purchase_token", .string(token)), ("product_id", .string(purchase.product)),
                                        ("package_name", .string(GooglePayloads.packageName)),
                                        ("app_user_id", .string(subscription.userId)),
                                        ("currency", .string(purchase.currency))],
                              body: body)
        let outcome: IngestTally.Outcome = subscription.isTest ? .excluded("test") : .used
        if subscription.isTest, rng.chance(0.5) {
            // A tester's purchase logged by the backend beside its notification (before or after it).
            try write(dailyKey(purchase.at), record.line, outcome, inSeconds: record.inSeconds)
        } else {
            try write("google-play/\(UTCCalendar.month(purchase.at)).zip",
                      "products-\(UTCCalendar.day(purchase.at)).json\t" + record.line, outcome, inSeconds: record.inSeconds)
        }
        try writePush(GooglePayloads.oneTimeNotification(token: token, sku: purchase.product, at: purchase.at), at: purchase.at,
                      outcome: outcome)
    }

    /// A Pub/Sub push of `notification`; sometimes delivered again a little later (same `messageId` and data).
    /// Now and then its message id is the previous message's (exports of two subscriptions merged): another
    /// message, used, and a conflict to warn about.
    private mutating func writePush(_ notification: JSONValue, at: Int64,
                                    outcome: IngestTally.Outcome = .used) throws(RecordSpool.SpoolError) {
        if rng.chance(0.01), messageCounter > 4_000_000_000_000_000 {
            tally.warn(IngestTally.messageIdConflicts)
        } else {
            messageCounter += 1
        }
        let push = GooglePayloads.pubSubPush(notification, messageId: String(messageCounter),
                                             publishedAt: at + rng.int(200...2000))
        let line = push.serialized
        try write(dailyKey(at), line, outcome)
        if rng.chance(0.03) {
            let redeliveredAt = at + rng.int(1...3) * 86_400_000
            try write(dailyKey(redeliveredAt), line, .duplicate)
        }
    }

    /// RTDN test notifications sent from the Play Console (excluded as tests).
    mutating func emitTestNotifications(at instants: [Int64]) throws(RecordSpool.SpoolError) {
        for at in instants {
            messageCounter += 1
            let push = GooglePayloads.pubSubPush(GooglePayloads.testNotification(at: at), messageId: String(messageCounter),
                                                 publishedAt: at + 500)
            try write(dailyKey(at), push.serialized, .excluded("test"))
            specialDays.insert(UTCCalendar.day(at))
        }
    }

    /// Lines that are not JSON (a proxy error page, a cut line, binary noise), as log files really hold.
    mutating func emitGarbage(at instants: [Int64]) throws(RecordSpool.SpoolError) {
        let samples = [
            "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>",
            "{\"received_at\": \"2024-03-01T12:00:00Z\", \"source\": \"apple.verify_receipt\", \"body\": {\"status\": 0, \"latest_rec",
            "\u{1}\u{2}\u{3}PK\u{3}\u{4} not a record",
            "ERROR 2024-03-01 12:00:00 upstream timed out (110: Connection timed out)",
        ]
        for (index, at) in instants.enumerated() {
            try write(dailyKey(at), samples[index % samples.count], .quarantined("malformed_json"))
            tally.garbage += 1
            specialDays.insert(UTCCalendar.day(at))
        }
    }
}
