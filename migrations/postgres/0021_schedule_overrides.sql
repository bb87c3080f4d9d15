-- A date that keeps other hours than its weekday (issue 19): a holiday (one row without hours:
-- no slots that day) or an event day (one row per opening range). On a date with any row here
-- the weekly rules are not used for that service in that store.
CREATE TABLE schedule_overrides (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    store_id BIGINT NOT NULL REFERENCES stores(id),
    staff_id BIGINT REFERENCES staff(id),
    -- The store's local date, YYYY-MM-DD.
    on_date TEXT NOT NULL CHECK (length(on_date) = 10),
    opens_min BIGINT CHECK (opens_min BETWEEN 0 AND 1439),
    closes_min BIGINT CHECK (closes_min BETWEEN 1 AND 1440),
    slot_minutes BIGINT CHECK (slot_minutes BETWEEN 5 AND 1440),
    capacity BIGINT CHECK (capacity BETWEEN 1 AND 1000),
    created_at BIGINT NOT NULL,
    CHECK (
        (opens_min IS NULL AND closes_min IS NULL AND slot_minutes IS NULL AND capacity IS NULL AND staff_id IS NULL)
        OR (opens_min IS NOT NULL AND closes_min IS NOT NULL AND slot_minutes IS NOT NULL AND capacity IS NOT NULL AND opens_min < closes_min)
    )
);
CREATE INDEX schedule_overrides_sku ON schedule_overrides (sku_id, store_id, on_date);
