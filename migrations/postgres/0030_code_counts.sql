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

-- Changes not yet folded into code_counts. The triggers append here rather than update a count
-- row: an update would lock that row until commit, and every sale of a batch would queue behind
-- the one before (codes are sold without a hot row). A job folds them in (codes::fold_counts);
-- readers add both, in one statement, so they never see a change twice or not at all.
CREATE TABLE code_count_deltas (
    id BIGSERIAL PRIMARY KEY,
    batch_id BIGINT NOT NULL,
    merchant_id BIGINT NOT NULL,
    sku_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    n BIGINT NOT NULL
);
CREATE INDEX code_count_deltas_sku ON code_count_deltas (sku_id);

INSERT INTO code_counts (batch_id, merchant_id, sku_id, status, n)
SELECT batch_id, MIN(merchant_id), MIN(sku_id), status, COUNT(*) FROM codes GROUP BY batch_id, status;

-- Statement-level, with transition tables: an import's INSERT of a thousand codes adds one row.
CREATE FUNCTION codes_counted_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO code_count_deltas (batch_id, merchant_id, sku_id, status, n)
    SELECT batch_id, merchant_id, sku_id, status, COUNT(*) FROM new_rows
    GROUP BY batch_id, merchant_id, sku_id, status;
    RETURN NULL;
END $$;

CREATE FUNCTION codes_counted_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO code_count_deltas (batch_id, merchant_id, sku_id, status, n)
    SELECT batch_id, merchant_id, sku_id, status, SUM(n) FROM (
        SELECT batch_id, merchant_id, sku_id, status, 1 AS n FROM new_rows
        UNION ALL
        SELECT batch_id, merchant_id, sku_id, status, -1 AS n FROM old_rows
    ) x GROUP BY batch_id, merchant_id, sku_id, status HAVING SUM(n) <> 0;
    RETURN NULL;
END $$;

CREATE FUNCTION codes_counted_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO code_count_deltas (batch_id, merchant_id, sku_id, status, n)
    SELECT batch_id, merchant_id, sku_id, status, -COUNT(*) FROM old_rows
    GROUP BY batch_id, merchant_id, sku_id, status;
    RETURN NULL;
END $$;

CREATE TRIGGER codes_counted_insert AFTER INSERT ON codes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION codes_counted_insert();
CREATE TRIGGER codes_counted_update AFTER UPDATE ON codes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION codes_counted_update();
CREATE TRIGGER codes_counted_delete AFTER DELETE ON codes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION codes_counted_delete();

-- Available codes past their expiry are not sellable until the expiry job marks them EXPIRED:
-- this finds the few of them without reading the rest.
CREATE INDEX codes_available_expiry ON codes (expires_at, sku_id, batch_id)
    WHERE status = 'AVAILABLE' AND expires_at IS NOT NULL;

-- A batch's page of codes, in id order, with or without a status filter, read from an index in
-- order rather than sorted from a million rows (SQLite's indexes end in the rowid already).
DROP INDEX codes_batch;
CREATE INDEX codes_batch ON codes (batch_id, status, id);
CREATE INDEX codes_batch_order ON codes (batch_id, id);
