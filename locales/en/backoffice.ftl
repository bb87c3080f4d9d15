# The back office's pages: dashboard and schedule (the rest is being moved here).
back = Back
pager = Pages
pager-page-of = page { $page } of { $pages }
pager-prev = Previous page
pager-next = Next page
pager-jump = Go to page
pager-go = Go
product-status = { $status ->
    [DRAFT] Draft
    [ONLINE] Online
    [OFFLINE] Offline
   *[other] { $status }
}

booking-status = { $status ->
    [BOOKED] Booked
    [CANCELLED] Cancelled
    [ATTENDED] Attended
    [NO_SHOW] No-show
   *[other] { $status }
}

dash-open-findings = Open reconciliation findings: { $n }.
dash-settle-payments = Settle them
dash-frozen-by-findings = { $n ->
    [one] A broken identity has frozen a SKU or slot: nothing more is sold from them until someone reviews them.
   *[other] Broken identities have frozen SKUs or slots: nothing more is sold from them until someone reviews them.
}
dash-review-findings = Review the findings
dash-products = products
dash-merchants = merchants
dash-not-sellable = not sellable
dash-low-stock = low stock
dash-open-findings-tile = open reconciliation findings
dash-bookings-today = bookings today
dash-today-fill = of today's places booked ({ $booked } of { $capacity })
dash-today-no-slots = no open slots today
dash-week-no-show = no-show rate this week
dash-week-mark = (mark attendance to see it)
dash-no-products = No products yet.
dash-create-first = Create the first one.
dash-stores = Stores
dash-no-stores = No stores yet. Add one with
dash-warehouses = Warehouses
dash-no-warehouses = No warehouses yet. Add one with

sched-tab-week = Week
sched-tab-day = Day list
sched-tab-hours = Weekly hours
sched-tab-closures = Closures
sched-tab-staff = Staff
sched-tab-metrics = Metrics
sched-choose-store = Choose a store
sched-show = Show
sched-times-in = times in { $tz }
sched-prev-week = ← Previous week
sched-next-week = Next week →
sched-this-week = This week
sched-week-of = Week of { $week }
sched-service = Service
sched-all-services = All services
sched-everyone = Everyone
sched-filter = Filter
sched-no-slots = No slots this week.
sched-slots-come-from = Slots come from a service's weekly schedule:
sched-create-service-first = Create a service product first; its weekly schedule makes the slots.
sched-no-slots-filtered = No slots match these filters this week.
sched-bookings-of = Bookings of { $date }
sched-weekly-schedules = Weekly schedules:
fill-free = free
fill-nearly-full = nearly full
fill-full = full
fill-closed = closed
blist-in-closed-slot = slot closed: to call
blist-held = offered from the waiting list, not yet accepted
fill-past = started or past
sched-bookings = Bookings
sched-prev-day = ← Previous day
sched-next-day = Next day →
sched-today = Today
sched-day = Day
sched-go = Go
sched-no-bookings = No bookings on this day.
sched-time = Time
sched-reference = Reference
party-badge = { $n ->
    [one] 1 person
   *[other] { $n } people
}
sched-cancel-booking = Cancel booking…
sched-move-booking = Move…
wait-title = Waiting list
wait-explain = When a place frees, the first waiting customer whose party fits is booked automatically. Call them to confirm.
wait-since = Waiting since
wait-explain-hold = When a place frees, it is held for the first waiting customer whose party fits until they accept or decline it on their waiting-list page, or the hold runs out. Call them to let them know.
wait-offered-until = Offered, held until { $time }
wait-offer-lapsed = Offer ran out unanswered
wait-status = { $status ->
    [WAITING] Waiting
    [OFFERED] Offered, held
    [BOOKED] Booked from the list
    [DECLINED] Declined the offer
    [CANCELLED] Left the list
   *[EXPIRED] Expired (the time started)
}
move-title = Move booking { $reference }
move-explain = Choose another time or staff member of the same service. The new place is taken first, so the customer never loses theirs; the reference stays the same. Call the customer to tell them.
move-none = No other time of this service has room for this booking in the coming weeks.
move-pick-day = Times on another day
move-nearest = The nearest times
move-none-that-day = No time of this service has room for this booking on that day.
move-here = Move here
sched-attended = Attended
sched-no-show = No-show
sched-n-bookings = { $n ->
    [one] { $n } booking
   *[other] { $n } bookings
}
sched-no-store = This merchant has no store yet. Slots, bookings and closures belong to a store: create one with
sched-operator-choose-store = Choose a merchant's store above to see its slots, bookings and closures.
sched-choose-store-above = Choose a store above.
sched-cancel-explain = The place becomes free for someone else at once. Tell the customer; this cannot be undone (they can book again).
sched-cancel-explain-closed = The slot is closed, so the place does not go back on sale. Tell the customer; this cannot be undone (they can book another time).
sched-reason-optional = Reason (optional)
sched-cancel-reason-example = Customer called: ill
sched-cancel-the-booking = Cancel the booking
sched-keep-it = Keep it
sched-no-staff = No staff members yet. Add one to give them their own slots in a schedule, or to close them for leave.
sched-their-week = Their week
sched-add-staff = Add a staff member
sched-add = Add

slot-status = { $status ->
    [OPEN] Open
    [CLOSED] Closed
   *[other] { $status }
}
frozen-by-reconciliation = Frozen by reconciliation:
frozen-broken-identity = a broken identity was found
frozen-review-finding = review finding #{ $finding }
frozen-finding-for-review = finding #{ $finding }, for an operator or merchant admin to review
slot-frozen-no-bookings = This slot takes no bookings until it is unfrozen.
slot-booked-capacity = Booked / capacity
slot-places-left = Places left
slot-to-contact = Bookings to contact
slot-to-contact-explain = This slot is closed, but these customers still hold a booking. Call them, then cancel their booking below or reopen the slot.
slot-started-record = The slot has started: record who came and who did not.
slot-not-started-explain = Bookings can be cancelled until the slot starts. Customers can be checked in shortly before it (see the store's settings); a no-show is recorded once it has started.
slot-no-bookings = Nobody has booked this slot yet.
slot-booked-at = Booked at
slot-places = Places
slot-save-capacity = Save capacity
slot-close-this = Close this slot
slot-close-confirm = Close this slot? Nobody can book it until it is reopened; existing bookings are listed for you to call.
slot-close-reason-example = Teacher off sick
slot-close = Close slot
slot-reopen-title = Reopen
slot-reopen = Reopen slot
slot-reopen-explain = Customers can book its free places again.

colon = {": "}
cl-one = Closure
cl-whole-store = Whole store
cl-the-whole-store = The whole store
cl-new-title = Close a staff member or the store
cl-new-explain = Every slot in the period closes at once; you then see the bookings to call.
cl-who = Who
cl-from = From
cl-until = Until
cl-reason-staff = Reason (staff only)
cl-reason-example = Annual leave
cl-public-note = Note for customers (optional)
cl-public-note-example = Closed for a private event
cl-close = Close
cl-all = All closures
cl-none = No closures yet: every slot follows the weekly schedule.
cl-period = Period
cl-state = State
cl-by = By
cl-state-active = closed
cl-state-ended = ended
cl-state-reopened = reopened { $at }
cl-reopen-link = Reopen…
cl-n = { $n ->
    [one] { $n } closure
   *[other] { $n } closures
}
cl-slots-held = Slots it holds closed
cl-created-by = Created by
cl-nobody-to-call = No active bookings in the closed slots: nobody needs a call.
cl-to-contact-explain = These customers hold a booking in a closed slot. Call them; then cancel their bookings to free the places, or reopen the closure.
cl-open-to-call = Work through them on the To call list
cl-slot = Slot
cl-bulk-confirm = { $n ->
    [one] Cancel the booking listed? Its place becomes free; the customer keeps the reference for the record.
   *[other] Cancel all { $n } bookings listed? Their places become free; customers keep their reference for the record.
}
cl-customer-reason = Reason given to customers
cl-customer-reason-example = Teacher on leave
cl-cancel-these = Cancel these bookings…
cl-reopen-confirm = Reopen these slots? Customers can book their free places again.
cl-reopen-explain = Ends the closure now: its slots open again unless another closure covers them.
cl-closed-slots = Closed slots
cl-was-reopened = The closure was reopened: its slots are open again.
cl-no-slot-in-period = No slot falls in this period.
cl-showing-first = Showing the first { $shown } of { $total } slots.
cl-cancel-bookings-title = Cancel bookings
cl-back = Back to the closure
cl-cancel-n-question = { $n ->
    [one] Cancel 1 booking?
   *[other] Cancel { $n } bookings?
}
cl-none-left = There is no active booking left in this closure's slots.
cl-cancel-explain = Their places become free at once. Make sure the customers have been told.
cl-cancel-the-bookings = Cancel the bookings
cl-keep-them = Keep them
cl-reopen-store-question = Reopen the whole store?
cl-reopen-who-question = Reopen { $who }?
cl-already-reopened = This closure was already reopened { $at }.
cl-reopen-now-explain = The closure ends now. Its slots open again and customers can book their free places, unless another closure still covers them.
cl-keep-closed = Keep it closed

verdict-sellable = Sellable
verdict-not-sellable = Not sellable
verdict-next-slots = Next open slots:
verdict-n-of-m-left = { $n } of { $m } left
met-title = Show, no-show and vacancy
met-weeks-from-monday = weeks from Monday, { $tz }
met-weeks = Weeks
met-explain = Rates, never totals: a place on Monday is not a place on Tuesday. Show and no-show rates count the places of bookings marked after the slot started (a party of three is three places); vacancy is the share of places in past open slots nobody booked.
met-no-services = No services yet: create a service product and give it a weekly schedule.
met-no-match = No service matches this code.
met-chart-label = Show, no-show and vacancy rates of { $code } per week
met-show-rate = show rate
met-no-show-rate = no-show rate
met-vacancy-rate = vacancy rate
met-week-of = Week of
met-past-slots = Past open slots
met-marked = Marked
met-not-marked = Not marked
met-show-rate-h = Show rate
met-no-show-rate-h = No-show rate
met-vacancy-rate-h = Vacancy rate
met-mark-to-see = Show and no-show rates appear once attendance is marked: in the day list, mark each booking of a past slot Attended or No-show. A merchant admin can also have no-shows marked automatically on the store's page.
met-open-day-list = Open the day list
met-x-axis = Week starting (Monday)

# A store's booking-page settings.
store-title = Booking page
stock-reason-code-label = Reason
stock-reason-choose = Choose…
stock-note = Note
stock-reason-code = { $code ->
    [received] Received from a supplier
    [return_restock] Return put back on sale
    [correction] Correction of an earlier mistake
    [count] Stock count
    [damaged] Damaged
    [theft_loss] Theft or loss
    [promotion_donation] Promotion or donation
    [qc_hold] Quality-control hold
   *[other] Other (say why in the note)
}
# A reason as records show it (the form's wording asks for a note).
stock-reason-name = { $code ->
    [received] Received from a supplier
    [return_restock] Return put back on sale
    [correction] Correction of an earlier mistake
    [count] Stock count
    [damaged] Damaged
    [theft_loss] Theft or loss
    [promotion_donation] Promotion or donation
    [qc_hold] Quality-control hold
   *[other] Other
}
stock-reason-category = { $category ->
    [inbound] Coming in
    [outbound] Going out
    [adjustment] Corrections and counts
    [hold] Holds
   *[other] Other
}
store-explain = What customers read about this store on its booking page and on their confirmation. Leave a field empty to say nothing.
store-open-public = Open the booking page
store-address-example = 1 Nanjing Road, Huangpu, Shanghai
store-phone-example = 021 6288 1234
store-description-example = A quiet tea room near the Bund. Classes in Chinese and English.
store-country = Country for phone numbers
store-country-explain = Two letters (CN, HK, SG…): customers' numbers without a country code are read as this country's. Empty: the country of the store's timezone ({ $tz }). The timezone is the one the store was made with: its slots and schedules are kept in it.
store-language = Language of the booking page
store-language-explain = Customers whose browser asks for Chinese or English see that language; the others see this one.
store-phone = Phone
store-save = Save

# The product form.
prod-description-hint = (shown to customers on the booking page)
dash-gate-off = The Redis gate has been off since { $since }.
dash-gate-off-explain = Orders and bookings are served from the database alone: slower under a rush, still exact. It turns back on by itself when Redis answers again.
dash-imports-failed = { $n ->
    [one] A code import failed in the last 24 hours.
   *[other] { $n } code imports failed in the last 24 hours.
}
dash-imports-open = See the code batches

# The closure form (issue 19): who is chosen on purpose, leave in whole days or in times.
cl-choose-who = Choose who…
cl-span-days = Whole days
cl-span-times = From a time to a time
cl-from-date = First day
cl-until-date = Last day (included)
cl-affected = Bookings
cl-to-call = To call

# Automatic no-shows (issue 19).
store-auto-no-show = Mark no-shows automatically after (minutes)
store-auto-no-show-off = Off
store-auto-no-show-explain = When set, bookings of a slot that ended this many minutes ago and that nobody marked as attended or no-show are marked no-show. The day list and the metrics say which were marked automatically. Empty: off.
store-bookings-title = Bookings
store-waitlist-hold = Hold a freed place for the waiting list (minutes)
store-waitlist-hold-off = Book automatically
store-waitlist-hold-explain = Empty: when a place frees, the first waiting customer whose party fits is booked at once. Set: the place is held for them this many minutes (never past the start) and they accept or decline it on their waiting-list page; if they do neither, it goes to the next in line.
met-auto-marked = ({ $n } automatically)
met-nothing = { $weeks ->
    [one] No slot of this service took place this week.
   *[other] No slot of this service took place in these { $weeks } weeks.
}
actor-apikey = API key “{ $name }”
actor-person-same-name = { $name } ({ $email })
actor-customer = Customer
actor-migration = Before holds were listed
actor-system = { $part ->
    [demo] Demo data
    [expiry] Hold expiry
    [reconcile] Reconciliation
    [webhooks] Webhook delivery
    [cli] Command line
    [waitlist] Waiting list
    [auto-no-show] Automatic no-show
   *[other] System ({ $part })
}

## People and sign-ins

people-link = Invitation link
people-link-once = Copy this link now and send it to them (by WeChat, email…): it is shown only this once, and works once, for 7 days.
people-you = you
people-role = { $role ->
    [merchant_admin] Merchant admin
    [store_staff] Store staff
   *[operator] Operator
}
people-active = Active
people-deactivated = Deactivated
people-reset = Reset password…
people-deactivate = Deactivate…
people-reactivate = Reactivate
people-invite = Invite a person
people-invite-explain = They get a link to choose their own password, and sign in with the role and store you give here, nothing more.
people-name-example = Li Na
people-role-explain = Store staff work one store's schedule and bookings and see stock; merchant admins change everything of the merchant.
people-store-for-staff = Store (store staff only)
people-send-invite = Create the invitation link
people-waiting = Invitations waiting
people-none-waiting = No invitation is waiting.
people-invited-by = Invited by
people-expires = Link works until
people-revoke = Revoke
people-action-title = { $action ->
    [reset] Reset a password
   *[deactivate] Deactivate a person
}
people-action-explain = { $action ->
    [reset] A new password is made and shown to you once; give it to them. Their current password stops working and they are signed out everywhere.
   *[deactivate] They are signed out everywhere at once and can no longer sign in. Everything they did stays in the records; you can reactivate them later.
}
people-action-confirm = { $action ->
    [reset] Make a new password
   *[deactivate] Deactivate
}
people-password-once = Their new password, shown only this once. Give it to them; they can change it on their account page.
people-back = Back to people
people-cancel = Cancel
account-title = Your account
account-name-label = The name others see next to what you do
account-password = Password
account-password-explain = At least 10 characters. Your other sessions are signed out when you change it.
account-change-password = Change password
invite-title = Join the back office
invite-for = { $merchant } invites you as { $role }.
invite-accept = Choose this password and sign in
invite-invalid = This invitation link has been used, revoked or has expired. Ask whoever invited you for a new one.

## Stores and warehouses

places-explain = Stores are where customers book services; warehouses hold the goods. The short name (slug) appears in links and in the API and cannot change later.
places-stores = Stores
places-no-stores = No store yet.
places-store-settings = Booking page settings
places-add-store = Add a store
places-store-example = Pudong store
places-slug-hint = Lowercase letters, digits and hyphens, like pudong-1. Used in links and by the API.
places-warehouses = Warehouses
places-priority-explain = Orders take units from the warehouse with the highest priority first.
places-no-warehouses = No warehouse yet: add one to receive stock.
places-add-warehouse = Add a warehouse
places-warehouse-example = East warehouse
staff-rename = Rename
staff-archive = Archive
staff-restore = Bring back
staff-archived = archived
staff-archive-explain = An archived member keeps everything they did and takes no new slots. Take them off the weekly schedule and close their coming slots first.

# Undone redemptions and multi-visit passes at the counter (issue 54).
counter-undone-now = Redemption undone: the code can be used again.
counter-uses-left = Visits left
counter-uses-of = { $left } of { $uses }
counter-undo = Undo this redemption
counter-undo-example = e.g. scanned the wrong customer's code
counter-undo-confirm = Undo the redemption
counter-undo-explain = The code is sold and usable again; its history keeps the redemption and why it was undone.
store-check-in = Check customers in from (minutes before the start)
store-check-in-explain = Staff can mark a booking attended from this many minutes before its start, as the customer arrives. 0: only from the start. A no-show is always after the start.
