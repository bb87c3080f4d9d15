-- Multi-visit passes (次卡, issue 54): a voucher SKU whose code is good for `uses` visits; each
-- redemption at the counter takes one (`codes.uses_taken`), and the last one ends the code
-- REDEEMED. A single-use voucher is a pass of one. A redemption taken by mistake is undone
-- within a window (the code's history keeps both, with the reason).
ALTER TABLE skus ADD COLUMN uses BIGINT NOT NULL DEFAULT 1;
ALTER TABLE codes ADD COLUMN uses_taken BIGINT NOT NULL DEFAULT 0;
UPDATE codes SET uses_taken = 1 WHERE status = 'REDEEMED';

-- A code's history gains the undone redemption. SQLite cannot change a CHECK in place: the table
-- is rebuilt with its rows and index.
CREATE TABLE code_events_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    code_id BIGINT NOT NULL REFERENCES codes(id),
    order_id TEXT,
    action TEXT NOT NULL CHECK (action IN ('VOIDED', 'REDEEMED', 'UNREDEEMED', 'REISSUED', 'LOCKED', 'UNLOCKED', 'INVALIDATED')),
    reason TEXT NOT NULL DEFAULT '',
    store_id BIGINT REFERENCES stores(id),
    actor TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
INSERT INTO code_events_new (id, merchant_id, code_id, order_id, action, reason, store_id, actor, created_at)
    SELECT id, merchant_id, code_id, order_id, action, reason, store_id, actor, created_at FROM code_events;
DROP TABLE code_events;
ALTER TABLE code_events_new RENAME TO code_events;
CREATE INDEX code_events_code ON code_events (code_id, id);
