# A service's weekly schedule in one store (admin/slots/schedule.html): the rules that make its
# slots, the form that replaces them, and what saving did.

rules-title = Schedule · { $code }
rules-weekly-of = Weekly schedule of
rules-week-grid = Week grid
# A weekday code of a rule (MON…SUN), as a short day name; forms keep the code as their value.
rules-weekday = { $day ->
    [MON] Mon
    [TUE] Tue
    [WED] Wed
    [THU] Thu
    [FRI] Fri
    [SAT] Sat
    [SUN] Sun
   *[other] { $day }
}
# Between the days of one rule line ("Mon Tue").
rules-day-sep = {" "}

rules-saved = Schedule saved
rules-report = { $created ->
    [one] { $created } slot created
   *[other] { $created } slots created
}, { $removed } removed, { $changed } with a new number of places, for the next { $days ->
    [one] day
   *[other] { $days } days
}.
rules-kept-edited = { $n ->
    [one] This slot keeps the number of places you set on it by hand; change it on the slot if the new schedule should apply:
   *[other] These slots keep the number of places you set on them by hand ({ $n }); change them on the slot if the new schedule should apply:
}
rules-kept-booked = { $n ->
    [one] This slot is no longer in the schedule but people booked it, so it was kept. Call the customers, then cancel or close the slot:
   *[other] These slots are no longer in the schedule but people booked them, so they were kept. Call the customers, then cancel or close each slot:
}
rules-n-booked = { $n } booked

rules-current = Current rules
rules-none = No rules yet: this service has no slots from a schedule in this store. Add the first rule below.
rules-days = Days
rules-opens = Opens
rules-closes = Closes
rules-slot-minutes = Slot (min)
rules-places-per-slot = Places per slot

rules-change = Change the schedule
rules-change-explain = Saving replaces every rule of this service in this store. Free slots the new rules no longer make are removed; booked ones are kept and listed for you. Fill the last line to add a rule; tick “Remove” to drop one.
rules-anyone = Anyone
rules-remove = Remove
rules-save = Save the schedule
# Around a link to the Staff page (sched-tab-staff).
rules-staff-hint-lead = Add a staff member on the
rules-staff-hint-tail = page first to give them their own slots.

# The editor (issue 19): one row per weekday with its opening ranges, copy a day, preview.
rules-change-explain-2 = One row per weekday. A day can have several opening ranges (a lunch break is two); fill the empty range to add one, tick “Remove” to drop one. Preview shows which slots saving would create, remove or keep; nothing is written until you save.
rules-day-closed = Closed
rules-copy-day = Copy { $day } to…
rules-copy = Copy
rules-copied = { $from } copied to { $to }. Not saved yet: preview or save.
rules-preview = Preview changes
rules-preview-title = What saving would do
rules-preview-counts = Over the next { $days } days: { $created } new, { $removed } removed, { $changed } with another capacity, { $unchanged } unchanged.
rules-preview-none = Saving would not change any slot.
rules-preview-date = Date
rules-preview-created = New
rules-preview-removed = Removed
rules-preview-changed = Capacity changed
rules-kept-full = { $n ->
    [one] This slot holds more places than the new capacity and keeps its own:
   *[other] These { $n } slots hold more places than the new capacity and keep their own:
}
rules-kept-closed = { $n ->
    [one] This slot left the schedule but a waiting list, a past booking or a finding refers to it: it is kept, closed, and cannot be booked.
   *[other] These { $n } slots left the schedule but a waiting list, a past booking or a finding refers to them: they are kept, closed, and cannot be booked.
}
rules-kept-booked-preview = { $n ->
    [one] This slot would leave the schedule but has bookings: it is kept.
   *[other] These { $n } slots would leave the schedule but have bookings: they are kept.
}
rules-kept-edited-preview = { $n ->
    [one] This slot's capacity was set by hand: it is kept.
   *[other] These { $n } slots' capacities were set by hand: they are kept.
}
rules-range-staff = Staff
rules-invalid-line = A line without a weekday

over-title = Date overrides
over-explain = On these dates the weekly hours do not apply: a holiday without slots, or an event day with its own hours. Removing an override brings the weekly hours back. Booked slots are never removed: they are listed to handle.
over-none = No date overrides ahead.
over-closed = No slots
over-remove = Remove
over-add = Add a date override
over-kind-closed = No slots that day (a holiday)
over-kind-hours = Other hours that day:
over-add-submit = Add the override
over-range = { $opens }–{ $closes } · { $minutes } min · { $capacity ->
    [one] 1 place
   *[other] { $capacity } places
}

oneoff-title = Add a one-off slot
oneoff-explain = A slot outside the weekly hours, such as a special session. It is refused if the staff member already has an open slot at that time.
oneoff-time = Starts at
oneoff-minutes = Length (min)
oneoff-submit = Add the slot

week-services-paged = This store has { $n } services; the grid shows { $per } of them at a time. Choose a service above to see only its slots.
schedules-title = Weekly hours
schedules-explain = Each service's weekly hours in this store. The slots customers book are made from them for the booking window; date overrides change single dates.
schedules-none = No services yet: create a product of kind “service” first.
schedules-count = { $n ->
    [one] 1 service
   *[other] { $n } services
}
schedules-no-rules = No weekly hours yet
schedules-edit = Edit hours
schedules-overrides = { $n ->
    [one] 1 date override ahead
   *[other] { $n } date overrides ahead
}
schedules-service = Service
schedules-hours = Hours

# The To call list (issue 19): bookings in closed slots, who reached whom.
sched-tab-to-call = To call
tocall-title = Bookings to call
tocall-explain = Every booking in a closed slot that has not taken place. Call the customer, note what was said, then move the booking to another time or cancel it. A booking leaves this list when it is moved, cancelled, or its slot reopens or ends.
tocall-show-waiting = Still to call ({ $n })
tocall-show-all = All ({ $n })
tocall-none = Nobody to call: no booking sits in a closed slot.
tocall-everyone-reached = Everyone on the list has been reached. “All” shows them with their notes.
tocall-reached-by = Reached by { $who }, { $when }
tocall-not-reached = Not reached yet
tocall-note-example = e.g. moved to Thursday, will call back
tocall-mark-reached = Reached
tocall-save-note = Save the note
tocall-undo = Not reached after all
dash-to-call = { $n ->
    [one] 1 booking in a closed slot still to call
   *[other] { $n } bookings in closed slots still to call
}
sched-slot-to-call = { $n ->
    [one] 1 to call
   *[other] { $n } to call
}
sched-closed-call = Closed · call

# The Bookings tab (issue 19): every booking, searched and filtered, CSV.
sched-tab-bookings = Bookings
blist-title = All bookings
blist-when = { $when ->
    [past] Past
    [cancelled] Cancelled
   *[upcoming] Upcoming
}
blist-search = Name, phone or reference
blist-search-example = e.g. Lin, 1380013, or K7Q2M9XR4T
blist-all-services = All services
blist-all-staff = Everyone
blist-apply = Show
blist-csv = Download as CSV
blist-none = { $when ->
    [past] No past bookings in this store yet.
    [cancelled] No cancelled bookings.
   *[upcoming] No upcoming bookings. Customers book on the store's booking page.
}
blist-none-matching = No booking in any tab matches. Search by part of the name, phone digits or the reference.
blist-none-here = { $when ->
    [past] No past booking matches.
    [cancelled] No cancelled booking matches.
   *[upcoming] No upcoming booking matches.
} Found:
blist-found-in = { $when ->
    [past] { $n } past
    [cancelled] { $n } cancelled
   *[upcoming] { $n } upcoming
}
blist-jump = Page
blist-sort = Sort by
blist-sort-default = Soonest first (past: latest first)
blist-sort-desc = Reversed
sched-marked-auto = marked automatically
sched-marked-by = marked by { $who }
rules-buffer = Break after (min)
rules-length-changed = { $n ->
    [one] One slot nobody has booked takes the new slot length.
   *[other] { $n } slots nobody has booked take the new slot length.
}
rules-blocked = { $n ->
    [one] One time is not opened: a slot that stays (booked, or made by hand) already covers it for the same person.
   *[other] { $n } times are not opened: a slot that stays (booked, or made by hand) already covers them for the same person.
}
rules-unused-tail = The last { $minutes } minutes, from { $from }, fit no whole slot and stay free. Change the closing time or the slot length to use them.
rules-created-closed = { $n ->
    [one] One of the new slots is closed at once: a closure (leave) covers it.
   *[other] { $n } of the new slots are closed at once: a closure (leave) covers them.
}
week-override-closed = { $sku }: no slots (date override)
week-override-hours = { $sku }: other hours (date override)
tocall-save-note-only = Save the note only (not reached)

# Staff book for a caller or a walk-in (issue 54).
book-staff-title = Book for a customer
book-staff-back = Back
book-staff-choose = Choose a time…
book-staff-channel = How they reached you
book-channel = { $channel ->
    [PHONE] By phone
    [WALK_IN] Walk-in
   *[other] Online
}
book-taken-by = { $channel ->
    [PHONE] By phone, taken by { $who }
    [WALK_IN] Walk-in, taken by { $who }
   *[other] Online
}
book-staff-submit = Book
book-staff-confirm-notice = { $minutes ->
    [one] Online bookings close 1 minute before the start. Book anyway
   *[other] Online bookings close { $minutes } minutes before the start. Book anyway
}
book-staff-not-saved = Not booked: check the fields marked below.
book-staff-no-slots = No time can be booked here now: every slot has started, closed or been frozen.
book-staff-offer-wait = This time is full. Put the customer on its waiting list: they are booked when a place frees, in turn.
book-staff-add-to-wait = Add to the waiting list
