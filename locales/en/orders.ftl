## Orders: every reservation, one order's page, releasing a hold, settling a payment

orders-intro = Every order that held goods or codes: open holds first, soonest to expire first.
order-status = { $status ->
    [RESERVED] Held, unpaid
    [CONFIRMED] Paid
    [RELEASED] Released
    [EXPIRED] Expired
   *[other] { $status }
}
orders-status = Status
orders-order = Order
orders-order-id = Order id
orders-lines = Lines
orders-age = Placed
orders-expiry = Hold expires
orders-expiring = expiring now
orders-payment = Payment
orders-no-payment = not paid
orders-when = When
orders-n = { $n ->
    [0] No orders.
    [one] 1 order.
   *[other] { $n } orders.
}
orders-none-yet = No orders yet. Orders appear here when the order system reserves goods through the API.
orders-none-match = No orders match these filters.
orders-late-payment = paid late
orders-to-settle = payment to settle
orders-line-codes = { $n ->
    [one] (a code)
   *[other] ({ $n } codes)
}
orders-line-in = in { $warehouse }
orders-line-hold = { $hold ->
    [checked] deducted on payment
   *[other] unlimited stock
}
orders-exceptions = Payments to settle
orders-exceptions-n = { $n ->
    [one] 1 payment to settle
   *[other] { $n } payments to settle
}
orders-exceptions-explain = These orders were paid after their hold ended and could not be fulfilled. Refund each one, or restock and fulfil it.
orders-exception-why = Why
orders-exception-status = { $status ->
    [EXPIRED] Paid after the hold expired.
    [RELEASED] Paid after the order was released.
   *[other] Paid while { $status }.
}
orders-shortfall = needs { $qty }, { $available } available
orders-exception-title = Payment to settle #{ $id }
orders-resolve-how = How was it settled?
orders-resolve-refunded = Refunded: the payment went back to the customer
orders-resolve-fulfilled = Fulfilled: take the goods now (after a restock)
orders-resolve-note = Note (what was done)
orders-resolve-do = Settle
orders-resolved-as = { $resolution ->
    [refunded] Refunded
    [fulfilled] Fulfilled
   *[other] { $resolution }
}
orders-order-title = Order { $order }
orders-created = Placed
orders-codes-in-state = { $n } { $state ->
    [SOLD] sold
    [REDEEMED] redeemed
    [VOIDED] voided
    [BOOKING] held
   *[other] { $state }
}
orders-bookings = Bookings
orders-booking-ref = Reference
orders-timeline = Timeline
orders-no-timeline = Nothing recorded for this order.
order-event = { $action ->
    [reservation-reserve] Held
    [reservation-confirm] Paid
    [reservation-confirm-late] Paid late, lines taken again
    [reservation-payment-ref] Payment reference recorded
    [reservation-release] Released
    [reservation-expire] Hold expired
    [stock-return] Returned
    [exception-record] Payment recorded as an exception
    [exception-resolve] Payment settled
   *[other] { $action }
}
orders-ledger = Stock moves
orders-no-ledger = This order moved no stock.
orders-move = Move
orders-qty = Quantity
orders-note = Note
orders-release-title = Release hold
orders-release-question = Release the hold of order { $order }?
orders-release-explain = The goods go back on sale and held codes back to the pool. The order system is not told: its next call about this order answers that it was released.
orders-release-reason = Reason
orders-release-reason-example = e.g. customer cancelled by phone
orders-release-do = Release hold
orders-release-keep = Keep the hold

## The counter: redeeming a code a customer shows

counter-intro = Type or scan the code the customer shows. It is checked first; redeem it once the product is right.
counter-code = Code
counter-check = Check
counter-product = Product
counter-redeem = Redeem
counter-redeemed-now = Redeemed
counter-redeemed-at = Redeemed at
