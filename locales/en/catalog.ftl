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
