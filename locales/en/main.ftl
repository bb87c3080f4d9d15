# The frame of every page: brand, navigation, who is signed in, banners.
app-error-toast = The request failed. Reload the page and try again.
app-degraded = Degraded: Redis is not answering, so this instance serves every request from the database alone. Nothing is lost; it switches back by itself when Redis answers.
nav-main = Main
nav-dashboard = Dashboard
nav-sellable = Not sellable
nav-orders = Orders
nav-counter = Counter
nav-products = Products
nav-stock = Stock
nav-people = People
nav-places = Stores and warehouses
nav-schedule = Schedule
nav-reconcile = Reconciliation
nav-codes = Codes
nav-api-keys = API keys
nav-webhooks = Webhooks
nav-audit = Audit log
who-all-merchants = All merchants
role-operator = Operator
role-merchant-admin = Merchant admin
role-store-staff = Store staff
sign-out = Sign out
lang-switch = Language

# Sign-in.
login-title = Sign in
login-email = Email
login-password = Password
login-submit = Sign in

# Error pages.
error-title = { $status ->
    [400] Bad request
    [401] Not signed in
    [403] Forbidden
    [404] Not found
    [405] Method not allowed
    [409] Conflict
    [413] Too large
    [415] Unsupported media type
    [422] Cannot be processed
    [429] Too many requests
    [503] Service unavailable
   *[other] Error
}
error-back = Back to the dashboard
error-back-public = Back to the booking page

# The public booking page.
public-book-online = Book online
public-book-at = Book at { $store }
public-nothing-bookable = Nothing can be booked online here at the moment. Please call the store.
public-services = Services
public-days = Days
public-no-times = No times left on this day. Try another day.
public-places-left = { $n ->
    [one] { $n } place left
   *[other] { $n } places left
}
public-full = full
public-not-available = not available
public-not-available-note = not available: { $note }
public-all-times = ← All times
public-with = with { $staff }
public-nearest = Nearest free times
public-no-other-times = No other free times at the moment.
public-your-name = Your name
public-phone = Phone
public-book-submit = Book this time
public-booking-title = Booking { $reference }
public-booking = Booking
public-booking-status-label = Status
public-booking-status = { $status ->
    [BOOKED] Booked
    [CANCELLED] Cancelled
    [ATTENDED] Attended
   *[other] Missed
}
public-address = Address
public-store-phone = Phone
public-call-store = To book more, call the store:
public-price = Price
public-free = Free
public-date-time-sep = {", "}
public-lasting = ({ $duration })
public-what = What
public-when = When
public-with-label = With
public-name = Name
public-party-size = Places
public-party-option = { $n ->
    [one] 1 person
   *[other] { $n } people
}
public-places = Places
public-add-to-calendar = Add to calendar (.ics)
public-change-until = You can reschedule or cancel here until { $date } { $time }.
public-reschedule-link = Reschedule
public-reschedule-title = Reschedule booking { $reference }
public-reschedule-explain = Choose another time: your new place is taken before the old one is given up, and your reference stays the same.
public-reschedule-here = Move here
public-reschedule-keep = Keep the booking as it is
public-wait-title = Waiting list
public-wait-explain = This time is full. Leave your name and phone: when a place frees you are booked automatically, in the order people joined.
public-wait-submit = Join the waiting list
public-wait-position = You are number { $n } on the waiting list.
public-wait-keep = Keep this page: when a place frees for you, your booking appears here.
public-wait-explain-hold = This time is full. Leave your name and phone: when a place frees, it goes to the first person on the list, who then has { $minutes } minutes to accept it.
public-wait-keep-hold = Keep this page: when a place frees for you, it is held here for { $minutes } minutes for you to accept.
public-wait-check = Check now
public-wait-leave = Leave the waiting list
public-wait-leave-yes = Yes, take me off the list
public-wait-leave-keep = No, keep my turn
public-wait-booked = A place freed: you are booked.
public-wait-expired = The time has started and no place freed. Sorry.
public-wait-left = You are no longer on the waiting list.
public-wait-other-times = See other times
public-wait-offered = A place freed for you. It is held until { $time }: accept it to be booked.
public-wait-accept = Accept the place
public-wait-decline = I no longer need it
public-wait-decline-question = Give the place back? It goes to the next person waiting.
public-wait-decline-yes = Yes, give it back
public-wait-decline-keep = No, keep the offer
public-wait-declined = You gave the place back. Thank you for letting us know.
public-wait-withdrawn = The store withdrew the place it had held for you. Sorry: please choose another time.
public-wait-offer-lapsed = A place was held for you, but the time to accept it ran out.
public-where = Where
public-keep-reference = Keep the reference: it finds this booking again.
public-cancel-link = Cancel this booking
public-cancel-title = Cancel { $reference }
public-cancel-question = Cancel booking { $reference }?
public-cancel-what = { $service }, { $date } at { $time }. The place will be given to someone else.
public-cancel-yes = Yes, cancel it
public-cancel-keep = Keep my booking

# The month view's weekday header (issue 19): Monday first.
public-weekday-initial = { $day ->
    [MON] Mo
    [TUE] Tu
    [WED] We
    [THU] Th
    [FRI] Fr
    [SAT] Sa
   *[SUN] Su
}
sell-back = { $n ->
    [0] Back to “Not sellable”: every SKU sells now
    [one] Back to “Not sellable”: 1 SKU left
   *[other] Back to “Not sellable”: { $n } SKUs left
}
# Brackets around an aside: full-width in Chinese.
paren = {" "}({ $x })
