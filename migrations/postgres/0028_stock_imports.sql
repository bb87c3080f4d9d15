-- Stock sheets (issue 20): a CSV of receipts or counts, kept from its upload (PREVIEW) until it is
-- applied (APPLIED), with the text to re-read at apply time. A file is applied once: the same bytes
-- of the same kind for the same merchant cannot be APPLIED twice.
CREATE TABLE stock_imports (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    kind TEXT NOT NULL CHECK (kind IN ('receipts', 'counts')),
    file_name TEXT NOT NULL,
    file_sha256 TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('PREVIEW', 'APPLIED')),
    mode TEXT CHECK (mode IS NULL OR mode IN ('all_or_nothing', 'valid_only')),
    applied_lines BIGINT NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    applied_at BIGINT
);
CREATE INDEX stock_imports_merchant ON stock_imports (merchant_id, id);
CREATE UNIQUE INDEX stock_imports_applied_once ON stock_imports (merchant_id, kind, file_sha256)
    WHERE status = 'APPLIED';
