-- Codes counted by batch and status, kept with every change to a code (issue 20): pages and
-- verdicts read these few rows instead of counting a million codes. Triggers keep them, so no
-- write path can forget to; reconciliation recounts and repairs them (`code_counts` drift).
-- No foreign key: a failed all-or-nothing batch deletes its codes and may be removed.
CREATE TABLE code_counts (
    batch_id BIGINT NOT NULL,
    merchant_id BIGINT NOT NULL,
    sku_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (batch_id, status)
);
CREATE INDEX code_counts_sku ON code_counts (sku_id);
CREATE INDEX code_counts_merchant ON code_counts (merchant_id);

-- Changes not yet folded into code_counts. PostgreSQL's triggers append here (an insert takes no
-- lock that a concurrent sale of the same batch waits for); a job folds them in. SQLite has one
-- writer, so its triggers update code_counts in place and leave this empty. Readers add both.
CREATE TABLE code_count_deltas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    batch_id BIGINT NOT NULL,
    merchant_id BIGINT NOT NULL,
    sku_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    n BIGINT NOT NULL
);
CREATE INDEX code_count_deltas_sku ON code_count_deltas (sku_id);

INSERT INTO code_counts (batch_id, merchant_id, sku_id, status, n)
SELECT batch_id, MIN(merchant_id), MIN(sku_id), status, COUNT(*) FROM codes GROUP BY batch_id, status;

-- A table rebuild of `codes` (SQLite's way to change a CHECK) drops these: recreate them after.
CREATE TRIGGER codes_counted_insert AFTER INSERT ON codes BEGIN
    INSERT INTO code_counts (batch_id, merchant_id, sku_id, status, n)
    VALUES (NEW.batch_id, NEW.merchant_id, NEW.sku_id, NEW.status, 1)
    ON CONFLICT (batch_id, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER codes_counted_update AFTER UPDATE OF status ON codes WHEN OLD.status <> NEW.status BEGIN
    UPDATE code_counts SET n = n - 1 WHERE batch_id = OLD.batch_id AND status = OLD.status;
    INSERT INTO code_counts (batch_id, merchant_id, sku_id, status, n)
    VALUES (NEW.batch_id, NEW.merchant_id, NEW.sku_id, NEW.status, 1)
    ON CONFLICT (batch_id, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER codes_counted_delete AFTER DELETE ON codes BEGIN
    UPDATE code_counts SET n = n - 1 WHERE batch_id = OLD.batch_id AND status = OLD.status;
END;

-- Available codes past their expiry are not sellable until the expiry job marks them EXPIRED:
-- this finds the few of them without reading the rest.
CREATE INDEX codes_available_expiry ON codes (expires_at, sku_id, batch_id)
    WHERE status = 'AVAILABLE' AND expires_at IS NOT NULL;

-- A batch's page of codes in id order without a status filter (`codes_batch` serves the
-- filtered one: a SQLite index ends in the rowid).
CREATE INDEX codes_batch_order ON codes (batch_id, id);
