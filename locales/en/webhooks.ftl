webhook-intro = Each change event is POSTed to your endpoints as JSON, signed with the endpoint’s secret in the header
webhook-intro-verify = . Failed deliveries are retried for three days; an endpoint failing for a whole day, or 20 times in a row, is paused.
webhook-copy-secret = Copy this signing secret now.
webhook-secret-once = It is shown only once. Your receiver checks each request’s signature with it.
webhook-add = Add an endpoint
webhook-url = URL
webhook-url-hint = A public http:// or https:// address. Addresses on this machine or a private network are refused.
webhook-url-hint-private-allowed = An http:// or https:// address. This server also accepts addresses on its own machine and private network.
webhook-events = Events
webhook-family = { $family ->
    [stock] every stock move
    [reservation] order holds: reserved, confirmed, released, expired
    [booking] bookings: booked, cancelled, attended, no-show
    [sku] a SKU turning sellable or not sellable, with the reasons
    [slot] slots created, closed, opened, resized, removed
    [closure] closures created and reopened
    [code_batch] code imports ready, partial, failed
    [code] code state changes (never the code itself)
    [reconcile] alerts: reconciliation froze or released a SKU or slot, Redis drift
    [exception] alerts: a payment with no goods held, and its settlement
    [gate] alerts: the Redis gate off for over a minute, and back
    [webhook] alerts: an endpoint paused because its deliveries kept failing
   *[other] { $family }
}
webhook-other-types = Other types (comma-separated; * for all)
webhook-create = Add endpoint
webhook-endpoints = Endpoints
webhook-none = No webhooks yet. Add an endpoint above to have changes sent to your systems.
webhook-status = Status
webhook-state = { $state ->
    [ACTIVE] Active
    [PAUSED] Paused
   *[other] { $state }
}
webhook-paused-why = { $why ->
    [failing] failing for a day
    [manual] by a person
    [breaker] failing again and again
   *[other] { $why }
}
webhook-open-log = Delivery log
webhook-failing-title = Webhook { $url } was paused: its deliveries failed for a whole day.
webhook-failing-explain = Every attempt since { $since } failed. Events keep queueing; fix the receiver, then resume it to send them.
webhook-failing-open = Open the delivery log
webhook-breaker-title = Webhook { $url } was paused: its last { $n } attempts all failed (timeouts or errors).
webhook-breaker-explain = It was paused so that it stops holding up deliveries. Events keep queueing; fix the receiver, then resume it to send them.
webhook-old-secret = Previous secret
webhook-old-secret-until = still signs until { $until }
webhook-pause = Pause
webhook-resume = Resume
webhook-delete = Delete
webhook-rotate = Rotate the secret
webhook-overlap = Keep the old secret signing for (hours)
webhook-rotate-button = Rotate
webhook-rotate-explain = During the overlap each request carries two signatures, one per secret, so your receiver can switch to the new secret without refusing anything.
webhook-log = Deliveries
webhook-all = All
webhook-filter = Filter
webhook-delivery-state = { $state ->
    [PENDING] Pending
    [DELIVERED] Delivered
    [FAILED] Given up
   *[other] { $state }
}
webhook-no-deliveries = Nothing sent yet. Events that commit from now on will appear here.
webhook-event = Event
webhook-attempts = Attempts
webhook-last-attempt = Last attempt
webhook-answer = Answer
webhook-next-attempt = next try { $at }
webhook-not-yet = not yet
webhook-latency = { $ms } ms
webhook-error = { $code ->
    [status] the receiver answered with an error
    [redirect] redirect (never followed)
    [timeout] timed out
    [connect] could not connect
    [unresolvable] name does not resolve
    [private_address] refused: not a public address
    [event_missing] the event no longer exists
   *[other] request failed
}
webhook-first-bytes = First bytes of the answer
webhook-redeliver = Send again
webhook-newest = Newest
webhook-older = Older
webhook-delete-question = Delete this webhook?
webhook-delete-explain = Nothing more will be sent to it, including events still waiting to be retried, and its delivery log is no longer shown. Who created, changed and deleted it stays in the audit log. This cannot be undone.
webhook-delete-confirm = Delete the webhook
webhook-keep = Keep it
webhook-url-example = https://orders.example.com/hooks/sellable
webhook-other-example = booking.cancelled, slot.closed
webhook-http-status = HTTP { $code }
webhook-no-deliveries-filtered = No delivery in this state.
webhook-waits-for-resume = waits until the webhook is resumed
