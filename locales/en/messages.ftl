# Sentences the code chooses (src/messages.rs): form errors, refusals, reasons, flashes.
# Variables keep the names of the Rust parameters.

m-required = { $field } is required.
m-too-long = { $field } is too long: at most { $max } characters.
m-bad-slug = { $field } may contain only lowercase letters, digits and hyphens.
m-bad-code = SKU code may contain only letters, digits, '-', '_' and '.'.
m-bad-email = Enter an email address like name@example.com.
m-public-not-found = { $thing ->
    [store] There is no booking page at this address. Check the link the store gave you.
    [booking] There is no booking with this reference. Check the reference on your confirmation.
    [slot] This time is not offered. Choose another time on the store's page.
   *[other] There is no page at this address.
}
m-bad-language = Choose 简体中文 or English.
m-bad-text = { $field } may not contain control characters.
m-storefront-saved = Saved: the booking page shows it now.
m-bad-price = Price must be a number of at most two decimals, like 12.50.
m-negative-price = Price cannot be negative.
m-price-too-large = Price can be at most { $max }.
m-bad-time = { $field } must be a date and time, like 2026-12-01T09:00.
m-sale-window-order = The sale must end after it starts.
m-bad-time-or-date = { $field } must be a date (2026-12-01) or a date and time (2026-12-01T09:00:00+08:00).
m-one-cursor = Give either before or after, not both.
m-bad-timezone = Unknown timezone "{ $tz }": use an IANA name such as Asia/Shanghai.
m-bad-currency = Currency must be a three-letter ISO code such as CNY.
m-password-too-short = Password must be at least { $min } characters.
m-duplicate-sku-code = SKU code "{ $code }" is already used by another SKU of this merchant.
m-duplicate-sku-in-request = SKU code "{ $code }" appears more than once.
m-no-skus = A product needs at least one SKU.
m-too-many-skus = A product can have at most { $max } SKUs.
m-duplicate-slug = There is already a { $what } with the slug "{ $slug }".
m-duplicate-email = There is already a user with the email "{ $email }".
m-not-found = No such { $thing ->
   *[other] { $what }
}.
m-forbidden = Your role does not allow this.
m-bad-login = Email or password is wrong.
m-login-throttled = Too many failed sign-ins. Wait { $minutes } minutes and try again.
m-reserved-key = Idempotency keys starting with "{ $prefix }" are reserved for the public booking page.
m-bad-country = { $code } is not a country code: use two letters, like CN.
m-busy = The server is busy signing people in. Try again in { $seconds } seconds.
m-signed-out = You are signed out.
m-product-created = Product "{ $name }" created.
m-product-saved = Product "{ $name }" saved.
m-status-changed = "{ $name }" is now { $status }.
m-sku-added = SKU { $code } added.
m-sku-saved = SKU { $code } saved.
m-key-revoked = API key "{ $name }" revoked. Systems using it can no longer call the API.
m-internal-error = Something went wrong on our side. It has been logged; try again in a moment.
m-csrf-rejected = This request came from another site and was refused.
m-page-not-found = There is no page at this address.
m-body-too-large = The request body is larger than this server accepts.
m-bad-json = The request body is not valid JSON for this call: { $detail }
m-bad-multipart = Send the upload as multipart/form-data with the codes in a part named "file".
m-method-not-allowed = This address does not answer that method.
m-invalid-text = The request contains characters that cannot be stored (such as a NUL byte or another control character). Remove them and try again.
m-text-part-too-long = A text field of the form is longer than { $kb } KB. Shorten it and try again.
m-login-too-fast = This account has had many wrong passwords lately, so it takes one try every few seconds. Try again in { $seconds } s.
m-password-too-common = This password is on the list of the most common passwords, which are guessed first. Choose another.
m-too-many-waits = You are already waiting for { $n } times or booked as many at this store, the most you can online. To wait for more, call or visit the store.
m-too-many-webhooks = This merchant already has { $n } webhooks, the most allowed. Delete one you no longer use first.
m-bad-content-type = Send the body as JSON with Content-Type: application/json.
m-bad-api-key = Send a valid API key as Authorization: Bearer <key>.
m-nothing-to-change = Nothing to change: send status, sale_starts_at or sale_ends_at.
m-unknown-sku = There is no SKU "{ $code }" in this catalog.
m-transfer-same-warehouse = Transfer to a different warehouse.
m-bad-qty = Quantity must be a whole number from 1 to { $max }.
m-bad-count = The counted quantity must be a whole number from 0 to { $max }.
m-not-enough-frozen = Cannot release { $wanted }: only { $frozen } held back.
m-count-stale = Stock moved since you counted: on hand was { $expected }, it is now { $now }. Review the difference and confirm again.
m-count-below-held = Counted { $counted }, but { $locked } are held by unpaid orders and { $frozen } are frozen: release or unfreeze those first.
m-idempotency-conflict = Idempotency key "{ $key }" was already used for a different request.
m-stock-adjusted = { $kind ->
    [RECEIVE] { $qty ->
        [one] 1 unit
       *[other] { $qty } units
    } received into { $warehouse }{ $why }.
    [WRITE_OFF] { $qty ->
        [one] 1 unit
       *[other] { $qty } units
    } written off from { $warehouse }{ $why }.
    [TRANSFER] { $qty ->
        [one] 1 unit
       *[other] { $qty } units
    } moved from { $warehouse } to { $to }{ $why }.
    [FREEZE] { $qty ->
        [one] 1 unit
       *[other] { $qty } units
    } held back from sale in { $warehouse }{ $why }.
    [UNFREEZE] { $qty ->
        [one] 1 unit
       *[other] { $qty } units
    } released for sale in { $warehouse }.
   *[COUNT] Counted { $qty } on hand in { $warehouse }{ $why }.
}
# After a stock adjustment's sentence: its note or reason.
m-stock-why = : { $why }
m-hold-holds-only = { $n ->
    [one] This hold holds 1 unit: release at most 1.
   *[other] This hold holds { $n } units: release at most { $n }.
}
m-hold-gone = That hold has been released meanwhile: choose one of those still held.
m-release-on-in-past = The release date cannot be in the past.
m-hold-too-small = This hold holds fewer than { $qty } units.
m-sku-frozen = { $sku } is frozen by reconciliation (finding #{ $finding }) until an operator reviews it.
m-slot-frozen = This slot is frozen by reconciliation (finding #{ $finding }) until an operator reviews it.
m-why-product-draft = The product is a draft: put it online to sell it.
m-why-product-offline = The product is offline: put it online to sell it.
m-why-sale-not-started = The sale opens on { $at_local } ({ $tz }).
m-why-sale-ended = The sale closed on { $at_local } ({ $tz }).
m-why-no-price = No price has been set for this SKU: set one (0 for a free item) to sell it.
m-why-sku-frozen = Frozen by reconciliation (finding #{ $finding }): { $explain }
m-why-no-stock-record = No stock has been received in any warehouse.
m-why-no-schedule = No schedule: the service has no opening rules and no slots ahead.
m-why-no-slots-in-window = No slots in the next { $days } days.
m-why-next-slot-beyond-window = The next open slot, { $at_local } ({ $tz }), is beyond the { $days }-day booking window.
m-why-no-batch = No codes have been uploaded or generated.
m-why-batch-importing = The batch { $name } is still importing ({ $progress }% done): its codes go on sale when it finishes.
m-why-stock-unlimited = Stock is not counted for this SKU (unlimited): it never runs out, and every sale is still written in the ledger.
m-why-gate-degraded = Redis is not answering: this instance answers from the database alone (slower, still correct).
m-warn-low-stock = Low stock: { $available } left (warning below { $threshold }).
m-warn-few-slots = Only { $open } open slots with places in the next 7 days (warning below { $threshold }).
m-warn-codes-running-out = { $available } codes left: about { $days_left } days at the recent rate of { $per_day } a day.
m-bad-whole-number = { $field } must be a whole number of at least 1.
m-not-on-sale = { $sku } is not on sale: { $why }
m-insufficient-stock = Not enough stock of { $sku }: { $wanted } wanted, { $available } available in one warehouse.
m-order-conflict = Order "{ $order_id }" was already reserved with different items.
m-reservation-expired = Order "{ $order_id }" expired: it holds nothing. Reserve under a new order id to sell it.
m-reservation-released = Order "{ $order_id }" is { $status }: its hold is gone. Reserve again to sell it.
m-bad-payment-ref = payment_ref must be at most { $max } printable characters.
m-payment-conflict = Order "{ $order_id }" was already paid with payment { $payment_ref }; another payment for it is for a person to look at.
m-paid-not-in-stock = Order "{ $order_id }" was paid, but a SKU deducted on payment is no longer in stock. The order is released and the payment recorded as exception #{ $id } for a merchant to refund or fulfil after a restock.
m-paid-not-held = Order "{ $order_id }" expired before it was paid, and its goods could not be taken again. The payment is recorded as exception #{ $id } for a merchant to refund or fulfil.
m-hold-released = The hold of order "{ $order_id }" was released: its goods are on sale again.
m-hold-not-released = Order "{ $order_id }" was no longer held (paid or expired meanwhile): nothing was released.
m-exception-settled = Payment #{ $id } settled: { $how ->
    [refunded] refunded.
    [fulfilled] fulfilled, the goods taken.
   *[other] { $how }.
}
m-bad-max-places = Places per booking is a whole number from 1 (one person per booking) to { $max }.
m-services-only-rule = Only services have a booking notice and a change cutoff.
m-bad-minutes = A number of minutes from 0 (until the start) to { $max }.
m-too-late-to-book = This time starts too soon to book online: book at least { $minutes } minutes ahead, or call the store.
m-change-closed = It is too close to the start to change this booking online: please call the store.
m-services-only-party = Only services take parties: places per booking is set on a service's SKU.
m-goods-only-policy = Only goods count stock: a stock policy or deduction mode other than the default is for goods SKUs.
m-bad-limit = A limit is a whole number from { $min } to { $max }; for none, leave it empty (null in the API).
m-limit-exceeded = { $per ->
    [customer] SKU { $sku } is limited to { $limit } per customer, who already holds or bought { $already }.
   *[order] SKU { $sku } is limited to { $limit } per order.
}
m-bad-customer-id = customer_id must be 1 to { $max } printable characters.
m-bad-party-size = { $max ->
    [1] This service takes one place per booking.
   *[other] One booking takes 1 to { $max } places.
}
m-slot-not-of-sku = Slot { $slot } is not a slot of { $sku }.
m-unknown-slot = There is no slot { $slot }.
m-code-unknown = No code of yours matches: check it was typed as printed.
m-code-already-redeemed = This code was already redeemed.
m-code-voided = This code was voided (refunded or replaced): it cannot be used.
m-code-not-sold = This code was never sold (it is { $status ->
    [AVAILABLE] still for sale
    [BOOKING] held by an unpaid order
    [LOCKED] locked
    [EXPIRED] expired
    [INVALID] invalidated
   *[other] { $status }
}): it cannot be used.
m-bad-exception-status = status must be open or resolved.
m-bad-resolution = Choose how it was settled: refunded or fulfilled.
m-exception-resolved = Exception #{ $id } is already resolved.
m-still-short = Order "{ $order_id }" still cannot be fulfilled: restock first, or record a refund.
m-order-changed = Order "{ $order_id }" changed meanwhile; reload and look again.
m-reservation-confirmed = Order "{ $order_id }" is already paid (CONFIRMED); use a return instead of a release.
m-duplicate-line = SKU { $sku } appears on more than one line; put the whole quantity on one line.
m-too-many-lines = An order can have at most { $max } lines.
m-bad-ttl = ttl_seconds must be a whole number from 1 to { $max }.
m-bad-order-id = order_id must be 1 to { $max } printable characters.
m-order-not-confirmed = Order "{ $order_id }" is not paid (CONFIRMED); only paid orders can be returned.
m-sku-not-in-order = Order "{ $order_id }" did not buy SKU { $sku }.
m-return-exceeds-order = That is more than the order bought: { $remaining } can still be returned.
m-return-conflict = Return "{ $return_id }" was already recorded with different details.
m-duplicate-staff = There is already a staff member called "{ $name }" in this store.
m-bad-clock = { $field } must be a time of day like 09:30.
m-bad-capacity = Capacity must be a whole number from 1 to { $max }.
m-unknown-store = There is no store "{ $slug }".
m-no-store = This merchant has no store yet.
m-store-required = This merchant has several stores: say which one.
m-too-many-rules = At most { $max } schedule rules per service and store.
m-closes-before-opens = Closing time must be after opening time.
m-bad-slot-length = Slot length must be from 5 to 1440 minutes.
m-bad-weekday = Unknown weekday "{ $day }": use MON, TUE, WED, THU, FRI, SAT or SUN.
m-unknown-staff = There is no staff member "{ $name }" in this store.
m-removed-from-schedule = Removed from the schedule
m-capacity-below-booked = Capacity cannot be { $capacity }: { $booked } places are already booked.
m-ends-before-starts = The end must be after the start.
m-slot-in-past = The slot must start in the future.
m-slot-too-long = A slot can last at most 24 hours.
m-closure-too-long = A closure can last at most a year.
m-slot-overlap = { $staff } already has a slot at that time.
m-slot-exists = There is already a slot of this service starting at that time.
m-bad-phone = Enter a valid phone number, like 138 0013 8000. A number from another country starts with + and its country code, like +44 7911 123456.
m-booking-key-conflict = This idempotency key was already used for another request (another slot or customer). Use a new key for a new booking.
m-too-many-bookings-phone = This phone number already holds { $limit } upcoming bookings at this store, the most one customer may hold. Cancel one or call the store.
m-too-many-bookings-address = { $limit } upcoming bookings at this store were already made from this connection, the most we accept from one. Call the store to book more.
m-already-booked-public = This phone number already holds a place in this slot. The confirmation link you received has the details.
m-form-used = This booking form was already sent. Open the time again to book.
m-bad-customer-name = Enter the name the booking is for.
m-slot-started = This slot has already started.
m-slot-full = This slot is full.
m-not-enough-places = { $remaining ->
    [one] Only 1 place is left in this slot.
   *[other] Only { $remaining } places are left in this slot.
}
m-already-booked = You already have a booking in this slot: reference { $reference }.
m-cancel-after-start = The slot has started: the booking can no longer be cancelled. Staff record it as attended or no-show.
m-booking-cancelled = Booking { $reference } was cancelled.
m-overlapping-rule = { $second } overlaps { $first } on { $weekday } for the same person: split the hours so they do not overlap.
m-waitlist-slot-closed = This time is closed: there is no waiting list for it.
m-waitlist-has-room = { $remaining ->
    [one] 1 place is free: book it instead of waiting.
   *[other] { $remaining } places are free: book instead of waiting.
}
m-already-waiting = You are already on the waiting list for this time (number { $position }).
m-booking-held = This place is only held for a waiting customer who has not accepted it yet: it cannot be moved or marked. Cancel it to give it to the next in line.
m-bad-reason-code = Choose a reason from the list.
m-reason-code-mismatch = “{ $code }” does not fit this kind of adjustment; it takes { $fits }.
m-whole-day = { $day }, the whole day
m-whole-days = { $from } – { $until }, whole days
m-waitlist-offer-ended = This offer is no longer open: it was taken, declined or ran out of time.
m-waitlist-offer-accepted = The place is yours: you are booked.
m-bad-waitlist-hold = Enter whole minutes from 1 to { $max }, or leave it empty to book waiting customers automatically.
m-booking-rescheduled = Your booking is moved to the new time. The reference stays the same.
m-closure-in-past = This period is already over: a closure closes times that are still ahead.
m-move-other-service = A booking moves to another time or staff member of the same service and store.
m-booking-not-movable = This booking has been recorded as attended or no-show: it can no longer be moved.
m-move-after-start = The booking's slot has started: it can no longer be moved.
m-booking-changed = The booking changed meanwhile (moved or cancelled by someone else). Reload and try again.
m-booking-moved = Booking { $reference } moved to { $when }. Its reference stays the same.
m-slot-not-started = Attendance can be recorded once the slot has started.
m-too-many-requests = Too many requests from your address. Wait a minute and try again.
m-booking-confirmed = You are booked. Your reference is { $reference }.
m-booking-cancelled-by-customer = Your booking is cancelled. The place is free for someone else.
m-code-move-refused = Cannot { $action } a code that is { $status }.
m-code-not-returnable = SKU { $code } is sold as codes, and a sold code never returns to sale: void it (a refund), or reissue it to give the order a new one.
m-import-abandoned = The import stopped before it finished (the server restarted). Nothing from it is on sale; upload the file again.
m-import-empty = The file has no codes.
m-import-nothing-valid = No line of the file is a valid new code: see the errors below.
m-import-all-or-nothing = All or nothing: { $rejected } lines were rejected, so nothing was imported.
m-already-downloaded = This batch was already downloaded. Codes can be revealed one at a time from the batch page.
m-bad-import-mode = Unknown import mode "{ $mode }": use "valid" (import the valid lines) or "all" (all or nothing).
m-line-invalid-characters = invalid characters
m-line-too-long = { $chars } characters, the limit is { $limit }
m-line-too-long-unread = more than { $cap } bytes, the limit is 128 characters
m-line-not-utf8 = not valid UTF-8 text (save the file as UTF-8)
m-line-empty = empty
m-line-bad-expiry = expires_at must be a date like 2027-01-31 or a time like 2027-01-31T23:59:00Z
m-line-expired = already expired
m-line-not-allowed = character { $at } is not allowed in this batch ({ $rule })
m-allowed-rule = { $rule ->
    [alnum] letters and digits only
    [alnum_dash] letters, digits and hyphens only
    [upper_alnum] capital letters and digits only
    [digits] digits only
   *[any] any characters
}
m-bad-allowed = Unknown character rule "{ $value }": use any, alnum, alnum_dash, upper_alnum or digits.
m-line-bad-csv = not a valid CSV row
m-csv-needs-code-column = The CSV file needs a header row with a "code" column.
m-line-duplicate = duplicates line { $first }
m-line-already-imported = already imported in batch #{ $batch }
m-upload-too-large = The file is larger than { $mb } MB. Split it into smaller files.
m-upload-too-many-lines = The file has more than { $max } lines. Split it into smaller files.
m-upload-broken = The upload did not arrive completely: { $detail }
m-upload-missing-file = Choose a file to upload.
m-bad-generate-count = Generate from 1 to { $max } codes.
m-bad-code-length = Code length must be from { $min } to { $max } characters.
m-batch-started = Batch #{ $id } is importing.
m-codes-moved = { $n } codes: { $action } done.
m-upload-not-multipart = Send the upload form as multipart/form-data, with the file attached.
m-generated-batch-name = { $count } generated codes
m-lookup-code-required = Type the code the customer reads out.
m-warehouse-not-applicable = SKU { $code } is sold as codes: leave the warehouse out.
m-code-keys-created = Created new keys for codes at rest in { $file }. Back this file up: without it the stored codes cannot be read.
m-slot-capacity-saved = Capacity set to { $capacity }.
m-slot-reopened = Slot reopened: its free places can be booked again.
m-booking-cancelled-by-staff = Booking { $reference } cancelled. The place is free again.
m-closure-reopened = Closure ended: its slots are open again unless another closure covers them.
m-staff-added = { $name } added to the staff.
m-fixed-by = { $who ->
    [operator] Only an operator can resolve this.
    [store] { $merchant }'s store staff or admin can change this.
   *[admin] Only { $merchant }'s admin can change this.
}
m-drift-repaired = Repaired automatically: Redis is rebuilt from SQL.
m-count-repaired = Repaired automatically: the count was taken again from the codes.
m-holds-repaired = Repaired automatically: the listed holds now add up to the units held back.
m-accept-needs-locked = Open orders hold { $held } units but the balance locks { $locked }: accepting would keep that wrong. Restore the balance instead.
m-correction-impossible = This correction would give an impossible balance ({ $target }). Adjust the stock first, then correct.
m-unexplained-change = Change made outside the ledger, found by reconciliation (finding #{ $finding })
m-finding-not-correctable = This finding cannot be corrected this way (or is already resolved).
m-identity-still-broken = Still broken: expected { $expected }, found { $found }. Correct it before unfreezing.
m-reconcile-run-failed = Reconciliation run #{ $run } failed: { $error }
m-finding-stock-restored = Balance restored to the ledger and open orders (finding #{ $finding }). The SKU stays frozen until you unfreeze it.
m-finding-stock-accepted = Balance accepted as it is; the difference is booked in the ledger (finding #{ $finding }). The SKU stays frozen until you unfreeze it.
m-finding-slot-corrected = Booked count set to the active bookings (finding #{ $finding }). The slot stays frozen until you unfreeze it.

## Chosen among several by the code (src/messages.rs)
m-bad-choice = { $field } must be one of: { $allowed }.
m-role-scope-operator = An operator belongs to no merchant or store.
m-role-scope-merchant-admin = A merchant admin needs a merchant and no store.
m-role-scope-store-staff = Store staff need a merchant and one of its stores.
m-wrong-unit-stock-code = SKU { $code } is a voucher: it is sold as codes, not as stock.
m-wrong-unit-stock-slot = SKU { $code } is a service: it is booked in time slots, not held as stock.
m-wrong-unit-stock-stock = SKU { $code } is not counted as stock.
m-wrong-unit-slot-code = SKU { $code } is a voucher: it is sold as codes, not booked in slots.
m-wrong-unit-slot-stock = SKU { $code } is goods: it is held as stock, not booked in slots.
m-wrong-unit-slot-slot = SKU { $code } is not a service.
m-wrong-unit-code-stock = SKU { $code } is goods: it is held as stock, not sold as codes.
m-wrong-unit-code-slot = SKU { $code } is a service: it is booked in time slots, not sold as codes.
m-wrong-unit-code-code = SKU { $code } is not sold as codes.
m-choose-warehouse = Choose a warehouse.
m-unknown-warehouse = There is no warehouse "{ $slug }".
m-not-enough-available = Cannot { $kind ->
    [WRITE_OFF] write off
    [FREEZE] freeze
    [TRANSFER] transfer
   *[other] take
} { $wanted }: only { $available } available.
m-quantity-service = { $n } places left in the next slot, { $at } ({ $tz })
m-quantity-voucher = { $n } codes available
m-quantity-unlimited = Unlimited
m-quantity-goods = { $n } available
m-list-sep = {", "}
m-clause-sep = {"; "}
m-sentence = { $text }.
m-oos-locked = { $n } held by unpaid orders
m-oos-frozen-because = { $n } frozen ({ $reason })
m-oos-frozen = { $n } frozen
m-oos-sold = { $n } sold
m-oos-none = None available of { $total } in stock.
m-oos = None available of { $total } in stock: { $parts }.
m-closure-item-staff-period = { $reason } ({ $staff }, { $period })
m-closure-item-staff = { $reason } ({ $staff })
m-closure-item-period = { $reason } ({ $period })
m-why-all-slots-closed = { $n ->
    [one] The only slot in the next { $days } days is closed: { $why }.
   *[other] All { $n } slots in the next { $days } days are closed: { $why }.
}
m-why-all-slots-full = { $full ->
    [one] The only open slot in the next { $days } days is full
   *[other] All { $full } open slots in the next { $days } days are full
}{ $closed ->
    [0] .
    [one] {" "}(1 more is closed).
   *[other] {" "}({ $closed } more are closed).
}
m-why-slots-frozen = { $n ->
    [one] The open slot with places is
   *[other] { $n } open slots with places are
} frozen by reconciliation (finding { $ids }) until an operator reviews it.
m-error-line = line { $line }: { $reason }
m-with-first-errors = { $text }. First errors: { $errors }
m-batch-failed = The last batch, { $name }, failed
m-batch-failed-because = The last batch, { $name }, failed: { $failure }
m-batch-partial = The last batch, { $name }, was imported in part: { $rejected } lines rejected
m-codes-by-status = { $n } { $status ->
    [AVAILABLE] available but past their expiry
    [BOOKING] held by unpaid orders
    [SOLD] sold
    [LOCKED] locked
    [EXPIRED] expired
    [INVALID] invalidated
    [VOIDED] voided after sale
    [REDEEMED] redeemed
    [PENDING] still importing
   *[other] other
}
m-no-codes = No codes available.
m-no-codes-because = No codes available: { $parts }.
m-slot-not-available = This time is not available.
m-slot-not-available-note = This time is not available: { $note }
m-slot-closed = This slot is closed.
m-slot-closed-because = This slot is closed: { $reason }.
m-batch-moved-lock = { $n ->
    [0] No code of this batch was AVAILABLE: nothing was locked.
    [one] 1 code locked: it cannot be sold until it is unlocked.
   *[other] { $n } codes locked: they cannot be sold until they are unlocked.
}
m-batch-moved-unlock = { $n ->
    [0] No code of this batch was LOCKED: nothing was unlocked.
    [one] 1 code unlocked: it is on sale again.
   *[other] { $n } codes unlocked: they are on sale again.
}
m-batch-moved-invalidate = { $n ->
    [0] No code of this batch was AVAILABLE: nothing was invalidated.
    [one] 1 code invalidated: it will never be sold.
   *[other] { $n } codes invalidated: they will never be sold.
}
m-code-moved-lock = Code #{ $id } locked: it cannot be sold until it is unlocked.
m-code-moved-unlock = Code #{ $id } unlocked: it is on sale again.
m-code-moved-invalidate = Code #{ $id } invalidated: it will never be sold.
m-code-moved-other = Code #{ $id }: { $action } done.
m-slot-closed-by-staff = { $n ->
    [0] Slot closed. Nobody had booked it.
    [one] Slot closed. One customer holds a booking: call them (listed below).
   *[other] Slot closed. { $n } customers hold a booking: call them (listed below).
}
m-booking-marked = { $status ->
    [ATTENDED] Booking { $reference } recorded as attended.
    [NO_SHOW] Booking { $reference } recorded as a no-show.
   *[other] Booking { $reference } is now { $status }.
}
m-booking-not-active = { $status ->
    [CANCELLED] Booking { $reference } is already cancelled.
   *[other] Booking { $reference } is { $status }: it can no longer be cancelled.
}
m-closure-created = { $slots ->
    [one] 1 slot closed.
   *[other] { $slots } slots closed.
} { $contact ->
    [0] Nobody had booked them.
    [one] One booking needs a call: see below.
   *[other] { $contact } bookings need a call: see below.
}
m-closure-bookings-cancelled = { $n ->
    [0] No booking was left to cancel.
    [one] 1 booking cancelled; its place is free again.
   *[other] { $n } bookings cancelled; their places are free again.
}
m-finding = { $what } ({ $subject }): expected { $expected }, found { $found }.
m-reconcile-run-done = Reconciliation run #{ $run } checked { $checked } balances, slots and order lines: { $broken ->
    [0] no broken identity
    [one] 1 broken identity (frozen, listed below)
   *[other] { $broken } broken identities (frozen, listed below)
}, { $repaired ->
    [0] no Redis repair
    [one] 1 Redis key repaired
   *[other] { $repaired } Redis keys repaired
}.
m-finding-resolved = Finding #{ $finding } resolved.
m-finding-unfrozen-still = Finding #{ $finding } resolved. { $what ->
    [slot] The slot
   *[sku] The SKU
} stays frozen: finding #{ $other } is still open.
m-finding-unfrozen = Finding #{ $finding } resolved. { $what ->
    [slot] The slot
   *[sku] The SKU
} is sellable again.

## Why a SKU can or cannot be sold: headings and the links that fix them
reason-product_draft = Product is a draft
reason-product_offline = Product is offline
reason-sale_not_started = Sale not open yet
reason-sale_ended = Sale has ended
reason-no_price = No price
reason-sku_frozen = Frozen by reconciliation
reason-no_stock_record = Never stocked
reason-out_of_stock = Out of stock
reason-no_schedule = No schedule
reason-no_slots_in_window = No slots in the booking window
reason-all_slots_closed = All slots closed
reason-all_slots_full = All open slots full
reason-slots_frozen = Slots frozen by reconciliation
reason-next_slot_beyond_window = Next open slot beyond the booking window
reason-no_batch = No codes yet
reason-batch_failed = Last batch failed
reason-batch_partial = Last batch imported in part
reason-batch_importing = Batch still importing
reason-no_codes_available = No codes available
reason-stock_unlimited = Unlimited stock
reason-gate_degraded = Redis gate degraded
reason-low_stock = Low stock
reason-few_slots = Few open slots this week
reason-codes_running_out = Codes running out
fix-product = Open the product
fix-price = Set a price
fix-finding = Review the finding
fix-stock = Open the stock
fix-schedule = Open the schedule
fix-closures = See why the slots are closed
fix-week = Open the week
fix-codes = Open the codes
fix-batch = Open the batch
fix-open = Open

## What a reconciliation finding means
finding-locked_mismatch = Units locked by the balance differ from what open orders hold
finding-ledger_mismatch = The balance changed outside the ledger: replaying the ledger gives another balance
finding-booked_mismatch = The slot's booked count differs from its active bookings
finding-overbooked = The slot holds more bookings than its capacity
finding-code_booking_without_reservation = A code is held (BOOKING) but no open order holds it
finding-code_sold_without_order = A code is SOLD but no paid order has it
finding-order_booking_mismatch = An order's bookings do not match it: a place of a released or expired order is still booked, or a held order lacks a place it booked
finding-code_line_mismatch = An order line does not hold exactly its quantity of codes
finding-redis_drift = Redis disagreed with SQL and was repaired from SQL
finding-code_count_drift = The kept count of a batch's codes in one status differed from the codes and was recounted
finding-hold_drift = The holds listed on the SKU's page did not add up to its units held back

## Field labels, in messages and beside form fields
field-name = Name
field-kind = Kind
field-status = Status
field-code = SKU code
field-sku_name = SKU name
field-price = Price
field-sale_starts_at = Sale start
field-sale_ends_at = Sale end
field-slug = Slug
field-email = Email
field-role = Role
field-timezone = Timezone
field-currency = Currency
field-password = Password
field-merchant = Merchant
field-store = Store
field-priority = Priority
field-qty = Quantity
field-date = Date
field-note = Note
field-release_on = Release on
field-reason = Reason
field-warehouse = Warehouse
field-to_warehouse = Destination warehouse
field-idempotency_key = Idempotency key
field-order_id = Order id
field-return_id = Return id
field-phone = Phone
field-customer_name = Name
field-places = Places
field-uses = Visits per code
field-slot_id = Time
field-capacity = Capacity
field-starts_at = Start
field-ends_at = End
field-opens = Opening time
field-closes = Closing time
field-expires_at = Expiry
field-address = Address
field-description = Description
field-language = Language
field-stock_policy = Stock policy
field-deduct = Deduct stock
field-url = URL
field-events = Events
field-other = This field

## A reconciliation finding's expected and found values (messages::finding_value): reconciliation
## stores them in these English forms; each language says them its way.
m-value-buckets = total { $total } locked { $locked } sold { $sold } frozen { $frozen }
m-value-locked = locked { $n }
m-value-booked = booked { $n }
m-value-booked-at-most = booked ≤ { $n }
m-value-order = { $status ->
    [RESERVED] a RESERVED order
    [CONFIRMED] a CONFIRMED order
   *[other] a { $status } order
}
m-value-codes = { $n ->
    [one] { $n } code
   *[other] { $n } codes
}
m-value-redis-equals-sql = Redis = SQL
m-value-stock-shift = available/locked/sold shifted by { $available }/{ $locked }/{ $sold }
m-value-slot-shift = remaining shifted by { $delta }, status { $status }
m-value-pool-fix = { $stale } stale ids removed, { $missing } missing ids added

## Audit details the code writes in a fixed form (src/web/admin/audit.rs reads them back)
m-audit-schedule-applied = { $created } created, { $removed } removed, { $changed } capacity changed, { $kept } kept with bookings, { $edited } hand-edited capacities kept
m-audit-schedule-rules = { $rules } rules in { $store }
m-bad-rate = A rate is a whole number of requests per second from { $min } to { $max } (0: unlimited), or empty for the default.
m-rate-limited = This API key made more than { $rate } requests a second. Try again in { $seconds } s.
m-key-rate-set = “{ $name }” may now make { $rate }.
m-unknown-event-type = “{ $word }” is not an event type (see the document’s list; a family ends with .*).
m-webhook-bad-url = Enter a full http:// or https:// address, at most { $max } characters.
m-webhook-private-address = { $host } is not a public address: webhooks cannot be sent to this machine or a private network.
m-webhook-unresolvable = { $host } cannot be found (its name does not resolve).
m-webhook-events-required = Choose at least one event type (or * for all).
m-webhook-bad-overlap = The overlap is a whole number of hours from 0 to { $max }.
m-webhook-paused = Webhook { $url } paused. Events keep queueing and are sent when you resume it.
m-webhook-resumed = Webhook { $url } resumed: what queued while it was paused is being sent.
m-webhook-deleted = Webhook { $url } deleted. Nothing more is sent to it.
m-webhook-redelivered = Event #{ $event } will be sent again within seconds.
m-webhook-exists = A webhook to this address for these events exists already (#{ $id }): its secret was shown when it was added. Rotate it there for a new one.
m-webhook-no-credentials = Leave the user name and password out of the address: check the Sellable-Signature header instead.
m-override-in-past = This date is already over: choose today or a later date.
m-too-many-overrides = At most { $max } date overrides per service and store: remove old ones first.
m-one-off-added = Slot added: { $when }.
m-customer-reached = { $reference }: marked as reached.
m-customer-not-reached = { $reference }: back on the list to call.
m-closure-who-required = Choose who is away, or “The whole store” to close everything.
m-override-closed-with-hours = “No slots that day” is ticked but hours are typed: choose “Other hours” to use them, or clear them.
m-choose-a-date = Choose a date.
m-copy-to-nothing = Tick the days to copy to, then press Copy.
m-bad-auto-no-show = Enter whole minutes from 1 to { $max }, or leave it empty to mark no-shows by hand only.
m-bad-buffer = The break after each slot is whole minutes from 0 to { $max }.
m-call-note-saved = { $reference }: note saved.
m-last-day-before-first = The last day cannot be before the first.
m-sheet-too-large = The file is larger than { $mb } MB: split it into smaller sheets.
m-sheet-empty = The file is empty.
m-sheet-too-many-lines = The file has more than { $max } lines: split it into smaller sheets.
m-sheet-missing-columns = The first line must name the columns; missing: { $columns }.
m-sheet-no-header = The first line must name the columns (sku, warehouse, qty).
m-sheet-bad-line = This line cannot be read as CSV (check its quotes).
m-sheet-bad-characters = This line holds characters that are not text (a line break inside a cell, or a control character).
m-sheet-counted-twice = Counted twice: line { $first } already counts this SKU in this warehouse.
m-sheet-no-good-lines = No line of this sheet can be booked.
m-sheet-has-bad-lines = { $n ->
    [one] 1 line cannot be booked: correct it and upload again, or apply the valid lines only.
   *[other] { $n } lines cannot be booked: correct them and upload again, or apply the valid lines only.
}
m-sheet-line-refused = Nothing was applied: line { $line } was refused when it was booked. { $why }
m-sheet-already-applied = This file was already applied (import #{ $id }). Nothing was booked again.
m-sheet-applied = { $n ->
    [one] 1 line applied: the stock and its ledger are updated.
   *[other] { $n } lines applied: the stock and its ledger are updated.
}
m-sheet-lines-refused-late = The stock moved since the preview, and these lines were refused as they were booked: { $lines }. They were not applied.
m-already-invited = { $email } already has an invitation waiting: revoke it first to send a new one.
m-invitation-invalid = This invitation link has been used, revoked or has expired. Ask for a new one.
m-password-mismatch = The two passwords are not the same.
m-cannot-deactivate-self = You cannot deactivate yourself: ask another admin.
m-wrong-password = That is not your current password.
m-invited = { $email } is invited. Send them the link below: it is shown only once.
m-invitation-revoked = The invitation of { $email } is revoked: its link no longer works.
m-person-deactivated = { $who } is deactivated and signed out everywhere. Their history stays.
m-person-reactivated = { $who } can sign in again.
m-own-password-changed = Your password is changed. Your other sessions are signed out.
m-own-name-saved = Your name is saved.
m-welcome = Welcome, { $name }.
field-display_name = Name
field-confirm = Password again
field-current = Current password
field-new = New password
field-mode = How to apply
field-file = File
m-bad-unit-cost = The cost of one unit is an amount of at least 0 with at most two decimals, like 12.50.
m-sheet-choose-file = Choose the CSV file to upload.
m-bad-priority = Priority is a whole number from -{ $max } to { $max }: orders take from the highest first.
m-place-saved = “{ $name }” is saved.
m-display-name-taken = “{ $name }” is taken: it is another person’s name or email here, or what the records call the system, the customer or an API key. Choose another.
m-staff-archived-meanwhile = { $name } has just been archived and takes no new work: choose someone else or bring them back on the staff page.
m-staff-still-scheduled = { $name } is still on the weekly schedule ({ $rules } opening ranges) and has { $slots } coming slots: take them off the schedule and close their coming slots (a closure does it) first.
m-staff-renamed = Renamed to { $name }.
m-staff-archived = { $name } is archived: no new slots, and everything they did stays.
m-staff-restored = { $name } is back on the team.

# Staff book for a caller or a walk-in (issue 54).
m-staff-booked = Booked { $reference } for { $name }, { $when }.
m-staff-waitlisted = { $name } is on the waiting list, number { $position }. They will be booked when a place frees.
m-staff-book-pick-slot = Choose a time to book.
m-staff-book-full = full
m-staff-book-left = { $n ->
    [one] 1 place left
   *[other] { $n } places left
}

# Multi-visit passes and undone redemptions (issue 54).
m-vouchers-only-uses = Only vouchers are good for several visits.
m-uses-fixed = Codes of this SKU were sold with their number of visits: it can no longer change. Create a new SKU for other terms.
m-code-not-redeemed = This code was not used: there is nothing to undo.
m-undo-window-passed = { $minutes ->
    [one] A use can be undone for 1 minute after it; this one is older.
   *[other] A use can be undone for { $minutes } minutes after it; this one is older.
}
m-bad-check-in = Enter minutes from 0 (only from the start) to { $max }.
m-staff-book-inside-notice = This time starts sooner than the { $minutes } minutes online bookings need. Tick the box below to book it for the customer anyway.
