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
