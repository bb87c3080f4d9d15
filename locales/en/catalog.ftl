# The back office's feature pages: API keys, audit log, codes, products, reconciliation,
# not sellable, stock. Prefixed by page.

## API keys

apikey-intro-call = Order systems call
apikey-intro-with = with
apikey-intro-merchant-only = . A key acts for this merchant only.
apikey-copy-now = Copy this key now.
apikey-shown-once = It is shown only once; we keep only a hash of it.
apikey-name-example = Order system (production)
apikey-create = Create key
apikey-none = No API keys yet.
apikey-starts-with = Key starts with
apikey-created = Created
apikey-by = By
apikey-last-used = Last used
apikey-never-used = never
apikey-revoke = Revoke
apikey-revoked-at = revoked { $at }
apikey-revoke-title = Revoke API key
apikey-revoke-question = Revoke API key “{ $name }”?
apikey-revoke-systems = Systems using the key starting with
apikey-revoke-explain = will get 401 on their next call. This cannot be undone; create a new key to restore access.
apikey-revoke-the-key = Revoke the key
apikey-keep = Keep it

## Shared punctuation (like `colon`): the end of a sentence that closes after a link.

full-stop = .

## Audit log

audit-intro-all = Every change to any merchant's data: who made it, when, and from which page or API call.
audit-intro-own = Every change to your data: who made it, when, and from which page or API call.
audit-all = All
audit-who = Who
audit-who-example = e.g. apikey
audit-action = Action
audit-subject = Subject
audit-subject-example = e.g. sku:TEA-1
audit-from-date = From
audit-to-date = To
audit-clear = Clear
audit-n-entries = { $n ->
    [one] { $n } entry.
   *[other] { $n } entries.
}
audit-n-entries-match = { $n ->
    [one] { $n } entry matches these filters.
   *[other] { $n } entries match these filters.
}
audit-more-than = More than { $max } entries.
audit-more-than-match = More than { $max } entries match these filters.
audit-times-in = Times in { $tz }.
audit-export-newest = The export holds the newest { $max }; narrow the dates to export the rest.
audit-export-at-most = The export holds at most { $max } entries.
audit-export-csv = Export CSV
audit-none-yet = No changes recorded yet.
audit-no-more = No more entries here.
audit-back-to-newest = Back to the newest
audit-none-match = No entries match these filters.
audit-time = Time
audit-detail = Detail
audit-source = From
audit-address = Address
audit-newest = Newest
audit-newer = Newer
audit-older = Older

## Codes (vouchers and card keys)

# A code's state (AVAILABLE, BOOKING, SOLD, LOCKED, EXPIRED, INVALID, PENDING): English shows the
# state's own name, which the sentences about codes use too.
codes-status = { $status }
# A batch's state (CREATING, READY, PARTIAL, FAILED), by its name in English.
codes-batch-status = { $status }
codes-of = Codes of
codes-intro = Vouchers and card keys: one row per code, each sold once.
codes-lookup-link = Look up a code a customer reads out
codes-no-skus = No voucher SKUs yet. Codes are sold for the SKUs of a voucher product.
codes-no-skus-lead = No voucher SKUs yet. Codes are sold for the SKUs of a voucher product:{" "}
codes-no-skus-create = create a voucher product
codes-no-skus-tail = {" "}first.
codes-voucher-sku = Voucher SKU
codes-choose-sku = Choose a voucher SKU
codes-product-link = product
codes-by-status = Codes by status
codes-sellable-now = sellable now (available, not expired)
codes-batches = Batches
codes-no-batches = No batches yet.
codes-no-batches-admin = No batches yet: upload a file or generate codes below.
codes-batch = Batch
codes-source = Source
codes-read = Read
codes-imported = Imported
codes-rejected = Rejected
codes-created = Created
codes-by = By
codes-source-generated = generated
codes-source-upload = upload
codes-upload-title = Upload codes
codes-upload-a = A
codes-upload-txt = file with one code per line, or a
codes-upload-csv = file whose header row has a
codes-upload-column = column and optionally
codes-upload-limits = . Up to { $lines } lines and { $mb } MB. The import runs in the background; its codes go on sale together when it finishes.
codes-file = File
codes-when-bad = When some lines are bad
codes-mode = Mode
codes-mode-valid = Import the valid lines
codes-mode-all = All or nothing
codes-name-optional = Name (optional)
codes-name-placeholder = the file's name
codes-expiry-optional = Expiry (optional, { $tz })
codes-upload = Upload
codes-generate-title = Generate codes
codes-generate-explain = Random, unguessable codes, stored like uploaded ones. You can download them once, as a file, from the batch's page; after that they can only be revealed one at a time.
codes-how-many = How many (1–{ $max })
codes-length = Length (10–32)
codes-alphabet = Characters
codes-alphabet-unambiguous = Letters and digits, no look-alikes
codes-alphabet-digits = Digits
codes-alphabet-letters = Letters, no look-alikes
codes-generate = Generate
codes-operator-choose-sku = Choose a merchant's voucher SKU above to see its codes and batches.
codes-choose-sku-above = Choose a voucher SKU above to see its codes and batches.

codes-batch-n = Batch #{ $id }
codes-batch-title = Batch #{ $id }: { $name }
codes-generated-by = generated by { $who } at { $at }
codes-uploaded-by = uploaded by { $who } at { $at }
codes-generating = Generating…
codes-importing = Importing…
codes-creating-explain = None of this batch's codes is on sale until it finishes; then they all are at once. This page updates by itself.
codes-refresh = Refresh
codes-lines-read = Lines read
codes-finished = Finished
codes-outcome-ready = { $n ->
    [one] Every line was imported: { $n } code is on sale.
   *[other] Every line was imported: { $n } codes are on sale.
}
codes-outcome-partial = { $imported ->
    [one] { $imported } code was imported and is on sale
   *[other] { $imported } codes were imported and are on sale
}; { $rejected ->
    [one] { $rejected } line was rejected
   *[other] { $rejected } lines were rejected
} (listed below).
codes-outcome-failed = The import failed: nothing from it is on sale.
codes-download-title = Download the codes
codes-download-explain = You generated these codes. Download them once, as a text file with one code per line; after that they can only be revealed one at a time.
codes-download = Download codes
codes-downloaded-at = The codes were downloaded at { $at }.
codes-every-code = Every code of this batch
codes-lock-available = Lock the available codes
codes-unlock-locked = Unlock the locked codes
codes-invalidate-batch-confirm = Invalidate every AVAILABLE code of batch #{ $id }? Invalid codes are never sold, and this cannot be undone.
codes-invalidate-available-link = Invalidate the available codes…
codes-moves-explain = Only AVAILABLE codes are locked or invalidated, and only LOCKED ones unlocked. Codes held by an order and sold codes never move.
codes-import-errors = Import errors
codes-no-line-rejected = No line was rejected.
codes-errors-csv = Download all errors as CSV
codes-error-pages = Error pages
codes-prev-errors = Previous errors
codes-more-errors = More errors
codes-nothing-imported = Nothing from this batch was imported.
codes-allowed = Characters allowed
codes-allowed-explain = A code with another character is refused, its line numbered. Spaces never count: they are taken out of every code.
codes-blank-lines = Blank lines skipped
codes-normalised = { $n ->
    [one] { $n } code was stored without the spaces it was typed with, on line:
   *[other] { $n } codes were stored without the spaces they were typed with, on lines:
}
list-comma = {", "}
codes-search = Code or order
codes-search-placeholder = a code as read out, or an order number
codes-clear-filter = Show every code
codes-none-match = No code of this batch matches. A code is found by its whole text (spaces and case do not matter) or by the order holding it.
codes-of-all = { $n ->
    [one] of { $n } in the batch
   *[other] of { $n } in the batch
}
codes-batch-empty = This batch holds no codes.
codes-listed = Codes are listed without their text.
codes-listed-reveal = Codes are listed without their text. Reveal one to read it: every reveal is recorded.
codes-code = Code
codes-line = Line
codes-order = Order
codes-expires = Expires
codes-lock = Lock
codes-unlock = Unlock
codes-invalidate-code-confirm = Invalidate code #{ $id }? It will never be sold, and this cannot be undone.
codes-invalidate-link = Invalidate…
codes-reveal = Reveal
codes-n-codes = { $n ->
    [one] { $n } code
   *[other] { $n } codes
}

codes-invalidate-code-title = Invalidate code #{ $id }
codes-invalidate-batch-title = Invalidate batch #{ $id }
codes-back-to-batch = Back to batch #{ $id }: { $name }
codes-invalidate-code-question = Invalidate code #{ $id }?
codes-line-of-batch = Line { $line } of batch #{ $batch } ({ $name })
codes-invalid-never-sold = An invalid code is never sold. This cannot be undone.
codes-invalidate-the-code = Invalidate the code
codes-keep-it = Keep it
codes-only-available = Only an AVAILABLE code can be invalidated; this one is { $status }.
codes-invalidate-batch-question = Invalidate batch #{ $id }?
codes-none-available = No code of this batch is AVAILABLE: there is nothing to invalidate.
codes-invalidate-batch-what = { $n ->
    [one] { $n } AVAILABLE code becomes INVALID
   *[other] { $n } AVAILABLE codes become INVALID
} and will never be sold. Codes held by an order, sold, locked or expired stay as they are. This cannot be undone.
codes-invalidate-available = Invalidate the available codes
codes-keep-them = Keep them

codes-download-page-title = Download · batch #{ $id }
codes-download-question = Download the codes of batch #{ $id }?
codes-still-generating = The codes are still being generated. Come back when the batch is ready.
codes-already-downloaded = These codes were downloaded at { $at }. Reveal single codes from the batch's page.
codes-download-n-of = { $n ->
    [one] { $n } code of
   *[other] { $n } codes of
}
codes-download-once = , one per line, as a text file. The file can be downloaded once: keep it somewhere safe. Afterwards the codes can only be revealed one at a time.
codes-not-now = Not now

codes-lookup-title = Look up a code
codes-lookup-explain = Type the code a customer reads out. Spaces never count (an import removes them too); hyphens do; a code is found as typed or in capitals. It is not kept, logged or put in the address.
codes-history-and-actions = Its history and actions

codes-choose-merchant = Choose a merchant
codes-lookup = Look up
codes-code-n = Code #{ $id }
codes-sku = SKU
codes-no-such-code = No such code.

codes-line-n = line { $line }
codes-order-n = order { $order }
codes-shown-once = shown once; this reveal is recorded
codes-reveal-not-kept = This page is not kept by your browser: copy the code now if you need it. Reveal it again from the batch's page.
codes-back-to-batch-n = Back to batch #{ $id }

## Products

# A product's kind (goods, voucher, service), by its name.
prod-kind = { $kind }
prod-new = New product
prod-search = Search
prod-search-placeholder = Name or SKU code
prod-sellable-now = Sellable now
prod-more-skus = { $n ->
    [one] and { $n } more SKU
   *[other] and { $n } more SKUs
}
prod-any = Any
prod-all = All
prod-none = No products yet.
prod-create-first = Create the first one
prod-none-match = No product matches these filters.
prod-skus = SKUs
prod-sale-window = Sale window
prod-n-products = { $n ->
    [one] { $n } product
   *[other] { $n } products
}
prod-sale-phase = { $phase ->
    [ended] sale ended
   *[not_started] sale not started
}
prod-prev = Previous
prod-next = Next
prod-check-fields = Check the fields marked below.
prod-legend-product = Product
prod-kind-goods-explain = goods — counted as stock
prod-kind-voucher-explain = voucher — sold as unique codes
prod-kind-service-explain = service — booked in time slots
prod-sale-starts = Sale starts ({ $tz })
prod-sale-ends = Sale ends ({ $tz })
prod-first-sku = First SKU
prod-sku-code-example = TEA-JAS-100
prod-sku-name-example = 100 g tin
prod-price = Price ({ $currency })
prod-create = Create product
prod-cancel = Cancel
prod-sale-window-tz = Sale window ({ $tz })
prod-put-online = Put online
prod-offline-confirm = Take { $name } offline? Customers will no longer see it.
prod-take-offline = Take offline
prod-back-to-draft = Back to draft
prod-code = Code
prod-counted-as = Counted as
prod-unit-stock = stock
prod-unit-codes = codes
prod-unit-slots = slots
prod-edit = Edit
prod-link-stock = Stock
prod-link-schedule = Schedule
prod-link-codes = Codes
prod-add-sku = Add SKU
prod-edit-product = Edit product
prod-save = Save
prod-edit-sku-title = Edit { $code }
prod-back-to-product = Back to the product
prod-edit-sku = Edit SKU
prod-code-stays = The code stays as it is: order systems refer to it.

## Reconciliation

# What a finding did (frozen, repaired), what started a run (job, cli, operator) and the state of
# Redis during it (on, off, degraded): by their names in English.
recon-action = { $action }
recon-trigger = { $trigger }
recon-redis = { $redis }
recon-run-now = Run reconciliation now
recon-last-checked = Last checked { $at } UTC
recon-intro = Reconciliation checks that every balance locks what open orders hold and replays from its ledger, that every slot's booked count matches its bookings, and that every code is held by exactly one order. A broken identity freezes its SKU or slot until someone reviews it, corrects it and unfreezes it. Redis drift is repaired from SQL on its own and listed here.
recon-n-broken = { $n ->
    [one] { $n } broken identity: its SKU or slot is frozen.
   *[other] { $n } broken identities: these SKUs and slots are frozen.
}
recon-nothing-sold = Nothing more is sold from them until each finding is reviewed, corrected and unfrozen.
recon-show-open = Show only the open findings
recon-findings = Findings
recon-tab-all = All (open first)
recon-tab-open = Open
recon-tab-open-n = Open ({ $n })
recon-tab-resolved = Resolved and Redis repairs
recon-no-more = No more findings on this page.
recon-back-first = Back to the first page
recon-none-open = No open findings: every identity holds and nothing is frozen.
recon-none-resolved = Nothing resolved or repaired yet.
recon-none = No findings yet: every reconciliation so far found every count in agreement with its records.
recon-subject = Subject
recon-expected = Expected
recon-found = Found
recon-since = Since
recon-resolved = Resolved
recon-status-open = open
recon-status-resolved = resolved
recon-review = Review
recon-details = Details
recon-page-n = Page { $n }
recon-newer = Newer
recon-older = Older
recon-latest-runs = Latest runs
recon-no-runs-lead = Reconciliation has not run yet. It runs every few minutes on each instance, with
recon-no-runs-tail = , or with the button above.
recon-started-utc = Started (UTC)
recon-trigger-h = Trigger
recon-scope-h = Scope
recon-scope = { $scope ->
    [changed] what changed since the last run
   *[other] everything
}
recon-by = By
recon-checked = Checked
recon-broken = Broken
recon-redis-repairs = Redis repairs
recon-redis-h = Redis
recon-error = Error
recon-running = running
recon-slot-at = Slot { $time }

recon-finding-n = Finding #{ $id }
recon-finding-lower = finding #{ $id }
recon-freezes-slot = This finding freezes the slot: it takes no bookings until the finding is unfrozen.
recon-freezes-sku = This finding freezes the SKU: it takes no reservations until the finding is unfrozen.
recon-slot-frozen-by = The slot is frozen by
recon-sku-frozen-by = The SKU is frozen by
recon-frozen-by-tail = .
recon-frozen-by-tail-open = ; this finding keeps it frozen too until both are resolved.
recon-slot-not-frozen = The slot is not frozen at the moment.
recon-sku-not-frozen = The SKU is not frozen at the moment.
recon-balance-now = Balance now (total / locked / sold / frozen)
recon-found-at = Found at
recon-run-n = run #{ $id }
recon-action-taken = Action taken
recon-resolution = Resolution
recon-correct-balance = Correct the balance
recon-correct-balance-explain = Both corrections book their change in the ledger with your reason, in one transaction with the balance. The SKU stays frozen until you unfreeze it below.
recon-restore = Restore
recon-restore-explain = puts the balance back to what the ledger says and locks exactly what open orders hold. Use it when the balance was changed by mistake.
recon-accept = Accept
recon-accept-explain = keeps the balance as it is and books the unexplained difference. Use it when the balance is right (a count in the warehouse confirms it) and the ledger missed a move. Only possible while the locked units match the open orders.
recon-reason-example = Manual database edit on 12 May, ticket #482
recon-restore-button = Restore the balance to the ledger and open orders
recon-accept-button = Accept the balance as it is (book the difference)
recon-correct-slot = Correct the slot
recon-correct-slot-explain = Sets the slot's booked count to its active bookings (refused if they no longer fit its capacity). The slot stays frozen until you unfreeze it below.
recon-correct-slot-button = Set booked to the active bookings
recon-fix-overbooked = There is no automatic correction for this: on the slot's page, cancel bookings (after calling the customers) or raise the capacity until the bookings fit, then unfreeze.
recon-fix-code = There is no automatic correction for this: look into the code and its order on the codes page and settle them, then unfreeze.
recon-unfreeze = Unfreeze
recon-unfreeze-explain-slot = Resolves the finding and makes the slot sellable again. Reconciliation checks the identity first: while it is still broken, nothing is unfrozen.
recon-unfreeze-explain-sku = Resolves the finding and makes the SKU sellable again. Reconciliation checks the identity first: while it is still broken, nothing is unfrozen.
recon-unfreeze-link = Unfreeze…

recon-unfreeze-title = Unfreeze · finding #{ $id }
recon-already-resolved = Finding #{ $id } is already resolved
recon-resolved-at = Resolved { $at }: there is nothing left to unfreeze.
recon-resolved-at-by = Resolved { $at } by { $who }: there is nothing left to unfreeze.
recon-unfreeze-slot-question = Unfreeze the slot of finding #{ $id }?
recon-unfreeze-sku-question = Unfreeze the SKU of finding #{ $id }?
recon-unfreeze-then-slot = The finding becomes resolved with your note, and the slot takes bookings again at once. Reconciliation checks the identity first: if it is still broken, nothing changes and you are told what is still wrong.
recon-unfreeze-then-sku = The finding becomes resolved with your note, and the SKU takes reservations again at once. Reconciliation checks the identity first: if it is still broken, nothing changes and you are told what is still wrong.
recon-unfreeze-then-slot-other = The finding becomes resolved with your note, and the slot takes bookings again at once, unless finding #{ $other } still freezes it. Reconciliation checks the identity first: if it is still broken, nothing changes and you are told what is still wrong.
recon-unfreeze-then-sku-other = The finding becomes resolved with your note, and the SKU takes reservations again at once, unless finding #{ $other } still freezes it. Reconciliation checks the identity first: if it is still broken, nothing changes and you are told what is still wrong.
recon-note = Note
recon-note-example = Balance restored and checked against the warehouse count
recon-keep-frozen = Keep it frozen

## Not sellable

sell-sku = SKU
sell-product = Product
sell-why = Why
sell-intro = Every SKU that cannot be sold right now, and why: worked out from the catalog, stock, slots and codes.
sell-judged-ago = { $s ->
    [0] Checked just now.
    [one] Checked { $s } second ago.
   *[other] Checked { $s } seconds ago.
}
sell-judge-now = Check again now
sell-of-n-blocked = { $n ->
    [one] of { $n } SKU cannot be sold now.
   *[other] of { $n } SKUs cannot be sold now.
}
sell-per-reason = SKUs per reason
sell-with-warning = Sellable, with a warning:
sell-no-skus = No SKUs yet.
sell-all-sellable = Every SKU can be sold right now.
sell-all-n = All { $n } SKUs: { $title }
sell-all-reasons = All reasons
sell-none-warning = No SKU has this warning now.
sell-none-blocked = No SKU is blocked for this reason now.
sell-n-skus = { $n ->
    [one] { $n } SKU
   *[other] { $n } SKUs
}
prod-policy = Limits
prod-sku-not-saved = Nothing was saved: correct the fields marked below.
prod-policy-explain = Leave a field empty for no limit. Per customer counts what one customer (the order system's customer_id) holds and has bought.
prod-policy-explain-service = Leave a field empty for no limit. These limits count orders from your order system (its customer_id). Bookings on the public page are limited per phone and per address in the store's settings; staff bookings are not limited.
prod-max-per-order = At most per order
prod-max-places = Places per booking (party size)
prod-min-notice = Book online at least (minutes ahead)
prod-change-cutoff = Customers cancel or reschedule online until (minutes before the start)
prod-notice-hint = 0: until the start. For example 120 = two hours. Staff booking a caller or a walk-in inside the notice are asked to confirm; staff cancel and move bookings until the start.
prod-max-places-hint = The most places one customer may book at once, e.g. 4 for a family. 1: one person per booking.
prod-max-per-customer = At most per customer
prod-low-stock = Warn of low stock below (empty: the global setting)
prod-unit-cost = Cost of one unit ({ $currency })
prod-unit-cost-hint = What one unit cost you. The stock report values your stock at it; customers never see it. Empty: not set.
prod-no-price = Not priced
prod-free = Free
prod-price-new-hint = 0 is a free item. Leave it empty to set the price later: the SKU is not sold until it has one.
prod-price-free-hint = 0 is a free item.
prod-price-unset-hint = No price yet: the SKU is not sold until it has one (0 is a free item).
prod-stock-fieldset = Stock
prod-stock-tracked = Tracked: sells only what is in stock
prod-stock-unlimited = Unlimited: never runs out (digital goods)
prod-deduct-on-order = When ordered (locked until paid)
prod-deduct-on-payment = When paid (the order only checks)
prod-deduct-explain = A change applies to orders made after it; open orders settle as they were made.
codes-code-title = Code #{ $id }
codes-sold-at = Sold
codes-change = Lock, unlock or invalidate
codes-history = History
codes-no-history = Nothing has happened to this code since it was imported.
codes-event = { $action ->
    [VOIDED] Voided
    [REDEEMED] Redeemed
    [UNREDEEMED] Redemption undone
    [REISSUED] Voided and replaced
    [LOCKED] Locked
    [UNLOCKED] Unlocked
    [INVALIDATED] Invalidated
   *[other] { $action }
}
sell-see-holding-orders = See the orders holding it
sell-prev = Previous
sell-next = Next

## Stock

# A ledger row's kind (RECEIVE, WRITE_OFF, COUNT, FREEZE, UNFREEZE, TRANSFER, RESERVE, CONFIRM,
# RELEASE, EXPIRE, RETURN_RESTOCK, RETURN_DAMAGED, CORRECTION) in words; the API and the CSV keep
# the name.
stock-kind = { $kind ->
    [RECEIVE] Received
    [WRITE_OFF] Written off
    [COUNT] Count
    [FREEZE] Held back
    [UNFREEZE] Hold released
    [TRANSFER] Moved
    [RESERVE] Reserved by order
    [CONFIRM] Sold
    [RELEASE] Order released
    [EXPIRE] Order timed out
    [RETURN_RESTOCK] Return restocked
    [RETURN_DAMAGED] Return written off
    [CORRECTION] Reconciliation correction
   *[other] { $kind }
}
stock-tile-on-hand = on hand
stock-col-on-hand = On hand
stock-col-committed = Committed
stock-col-held = Held back
stock-tile-on-hand-explain = Units in your warehouses: available, committed to orders and held back.
stock-tile-available-explain = Units a new order can take now.
stock-tile-committed = committed
stock-tile-committed-explain = Held by unpaid orders until they pay, cancel or time out.
stock-tile-unavailable = held back
stock-tile-unavailable-explain = Held back from sale: quality control, or damage awaiting a decision.
stock-holds = Held back from sale
stock-held = Held
stock-held-since = Since
stock-hold-due = due for release
stock-release-hold = Release…
stock-nothing-held = Nothing is held back from sale.
stock-which-hold = Hold
stock-n-held = { $n } held
stock-from-warehouse = From
stock-to-warehouse = To
stock-counted-on-hand = Counted on hand
stock-units = Units
stock-task = { $kind ->
    [RECEIVE] Receive
    [WRITE_OFF] Write off
    [TRANSFER] Move
    [FREEZE] Hold back
    [UNFREEZE] Release a hold
   *[COUNT] Count
}
stock-task-explain = { $kind ->
    [RECEIVE] Units that arrived: a delivery, or a return put back on sale.
    [WRITE_OFF] Units that are gone: damaged, lost, or given away.
    [TRANSFER] Units moved from one warehouse to another.
    [FREEZE] Units kept from sale until someone releases them, for example for a quality check.
    [UNFREEZE] Units of a hold put back on sale.
   *[COUNT] What you counted on the shelf: the difference from the books is recorded. You see it before it is booked.
}
stock-task-submit = { $kind ->
    [RECEIVE] Receive
    [WRITE_OFF] Write off
    [TRANSFER] Move
    [FREEZE] Hold back
    [UNFREEZE] Release
   *[COUNT] Show the difference
}
stock-note-example = { $kind ->
    [RECEIVE] Supplier delivery #1234
    [WRITE_OFF] Cracked in transit
    [TRANSFER] For the east-side orders
    [FREEZE] Check for damp
    [UNFREEZE] Check passed
   *[COUNT] Monthly count
}
stock-never-stocked = This SKU has never had stock. Receive the first units to see sales, cover and a chart here.
stock-chart-window = Chart period
stock-n-days-window = { $n } days
stock-chart-label = Available units over the last { $days } days (peak { $peak })
stock-chart-caption = Available over the last { $days } days · peak { $peak }
stock-title = Stock · { $code }
stock-of = Stock of
stock-frozen-no-reservations = No reservations are accepted for this SKU until it is unfrozen.
stock-tile-available = available
stock-tile-sold = sold
stock-none = No stock in any warehouse yet.
stock-unlimited-note = Stock is not counted for this SKU (unlimited): it never runs out and locks nothing. Every sale is still written in the ledger below.
stock-unlimited-edit = Change the stock policy
stock-none-admin = No stock in any warehouse yet. Receive the first units below.
stock-available = Available
stock-sold = Sold
stock-adjust = Adjust stock
stock-count-in = Count in { $warehouse }: on hand now
stock-counted = , counted
stock-no-difference = No difference: confirming records the count.
stock-will-be-booked = will be booked.
stock-confirm-count = Confirm count
stock-last-30-days = Last 30 days
stock-sold-7-30 = Sold (7 / 30 days)
stock-sell-through = Sell-through (30 days)
stock-cover-7d = Days of cover at the 7-day rate
stock-cover-30d = Days of cover at the 30-day rate
stock-n-days = { $n } days
stock-no-sales = no sales
stock-out-of-stock = Out of stock
stock-never-out = never
stock-dur-under-minute = < 1 min
stock-dur-days-hours = { $d } d { $h } h
stock-dur-hours-minutes = { $h } h { $m } min
stock-dur-minutes = { $m } min
stock-ledger = Ledger
stock-all = All
stock-from-date = From
stock-to-date = To
stock-export-csv = Export CSV
stock-no-rows = No ledger rows.
stock-no-rows-match = No ledger rows match these filters.
stock-time = Time
stock-qty = Qty
stock-change = Change
stock-buckets = Total / committed / sold / held back
stock-order = Order
stock-by = By
# One bucket's change in a ledger row ("total +5"); the row joins them with stock-change-sep.
stock-change-of = { $bucket ->
    [total] total
    [locked] committed
    [sold] sold
    [frozen] held back
   *[other] { $bucket }
} { $change }
stock-change-sep = {", "}
stock-n-rows = { $n ->
    [one] { $n } row
   *[other] { $n } rows
}
apikey-rate = Rate limit
apikey-rate-default = default ({ $rate }/s)
apikey-rate-unlimited = unlimited
apikey-rate-per-second = { $rate }/s
apikey-rate-set = Set
apikey-rate-hint = Requests per second on each instance: 0 for unlimited, empty for the default.
apikey-rate-default-label = default

## The stock report

report-title = Stock report
report-explain = Every goods SKU in all warehouses, or in one: what is on hand, what sold, and how long it lasts at the last 30 days' rate. Click a column to sort by it.
report-search-placeholder = SKU code, name or product
report-no-goods = There are no goods to report on yet.
report-none-match = No SKU matches these filters.
report-n-skus = { $n ->
    [one] SKU
   *[other] SKUs
}
report-status = { $status ->
    [out_of_stock] Out of stock
    [low] Low stock
    [ok] In stock
   *[unlimited] Not counted
}
report-low-below = Fewer than { $n } available
report-col-sku = SKU
report-col-sold-7d = Sold, 7 days
report-col-sold-30d = Sold, 30 days
report-col-cover = Days of cover
report-col-unit-cost = Unit cost
report-value-at-cost = Value at cost

## Stock sheets (CSV import of receipts and counts)

sheet-title = Import a stock sheet
sheet-explain = Book a delivery note or a stocktake from a spreadsheet: upload it, check what each line will do, then apply it. A file is applied once.
sheet-step-template = Start from a sheet:
sheet-template = { $kind ->
    [counts] Count sheet with every SKU
   *[receipts] Empty receipts sheet
}
sheet-step-columns = Keep the first line, which names the columns: sku, warehouse and qty, and if you like reason_code and note.
sheet-step-preview = Upload it: nothing is booked until you apply the preview.
sheet-kind = What the quantities are
sheet-kind-name = { $kind ->
    [counts] Counts (set what is on the shelf)
   *[receipts] Receipts (add what arrived)
}
sheet-file = File
sheet-limits = CSV in UTF-8 or as Excel saves it (GB18030), at most { $mb } MB and { $lines } lines. In a count sheet, a line with no quantity is skipped.
sheet-upload = Upload and preview
sheet-recent = Recent sheets
sheet-none-yet = No sheet imported yet.
sheet-applied-lines = { $n ->
    [one] Applied: 1 line
   *[other] Applied: { $n } lines
}
sheet-not-applied = Not applied
sheet-n = Sheet #{ $id }
sheet-mode = { $mode ->
    [all_or_nothing] all or nothing
   *[valid_only] valid lines only
}
sheet-see-report = See the stock report
sheet-duplicate = This file was already applied as sheet #{ $id }. It cannot be applied again.
sheet-summary = { $good ->
    [one] 1 line can be booked
   *[other] { $good } lines can be booked
}, { $bad ->
    [one] 1 cannot.
   *[other] { $bad } cannot.
}
sheet-skipped = { $n ->
    [one] 1 empty line skipped.
   *[other] { $n } empty lines skipped.
}
sheet-apply-all = { $n ->
    [one] Apply the line
   *[other] Apply all { $n } lines
}
sheet-apply-valid = { $n ->
    [one] Apply the 1 valid line only
   *[other] Apply the { $n } valid lines only
}
sheet-all-needs-clean = All or nothing needs every line to be valid.
sheet-upload-another = Upload another file
sheet-bad-lines = Lines that cannot be booked
sheet-good-lines = Lines that will be booked
sheet-line = Line
sheet-as-written = As written
sheet-why = Why
sheet-on-hand-now = On hand now
sheet-difference = Difference
report-import = Import a stock sheet

# Multi-visit passes (issue 54).
prod-uses = Visits per code
prod-uses-hint = 1: a voucher used once. More: a pass (e.g. 10 visits), one visit taken each time the code is redeemed at the counter. Fixed once a code is sold.
