# The back office's pages: dashboard and schedule (the rest is being moved here).
back = Back
pager = Pages
pager-page-of = page { $page } of { $pages }
pager-prev = Previous page
pager-next = Next page
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
dash-no-products = No products yet.
dash-create-first = Create the first one.
dash-stores = Stores
dash-no-stores = No stores yet. Add one with
dash-warehouses = Warehouses
dash-no-warehouses = No warehouses yet. Add one with

sched-tab-week = Week
sched-tab-day = Day list
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
sched-confirm-cancel = Cancel booking { $reference } for { $name }? The place becomes free for someone else.
sched-cancel-booking = Cancel booking…
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
sched-reason-optional = Reason (optional)
sched-cancel-reason-example = Customer called: ill
sched-cancel-the-booking = Cancel the booking
sched-keep-it = Keep it
sched-no-staff = No staff members yet. Add one to give them their own slots in a schedule, or to close them for leave.
sched-their-week = Their week
sched-add-staff = Add a staff member
sched-add = Add
