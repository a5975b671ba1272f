/// The subscription notification types of Google's RTDN `subscriptionNotification.notificationType`.
/// Numbers not listed (Google adds types) stay raw in the `event` fact's `detail` and change no state.
enum GoogleNotificationType: Int {
    case recovered = 1, renewed = 2, canceled = 3, purchased = 4, onHold = 5, inGracePeriod = 6, restarted = 7
    case priceChangeConfirmed = 8, deferred = 9, paused = 10, pauseScheduleChanged = 11, revoked = 12, expired = 13
    case itemsChanged = 17, cancellationScheduled = 18, priceChangeUpdated = 19, pendingPurchaseCanceled = 20
    case priceStepUpConsentUpdated = 22
}
