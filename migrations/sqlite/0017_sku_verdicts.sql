-- The last sellable verdict of each SKU (issue 18): the verdict watcher compares the live
-- verdict with it and, when a SKU turns sellable or not sellable, writes `sku.sellable_changed`
-- through an update conditional on this row, so several instances tell each turn once.
-- `reasons` holds the blocking reasons' codes in verdict order, comma-separated; `seen_at` when
-- the facts behind the kept verdict were read (a pass that read older facts changes nothing).
CREATE TABLE sku_verdicts (
    sku_id BIGINT PRIMARY KEY REFERENCES skus(id),
    sellable BIGINT NOT NULL,
    reasons TEXT NOT NULL,
    seen_at BIGINT NOT NULL
);
