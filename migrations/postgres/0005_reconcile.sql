-- Reconciliation: runs, what they found, and what was done about it. A broken SQL identity
-- freezes its SKU or slot (frozen_finding_id) until an operator resolves the finding.
CREATE TABLE reconcile_runs (
    id BIGSERIAL PRIMARY KEY,
    trigger TEXT NOT NULL CHECK (trigger IN ('job', 'cli', 'operator')),
    actor TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    checked BIGINT NOT NULL DEFAULT 0,
    broken BIGINT NOT NULL DEFAULT 0,
    drift_found BIGINT NOT NULL DEFAULT 0,
    drift_repaired BIGINT NOT NULL DEFAULT 0,
    redis TEXT NOT NULL DEFAULT 'off',
    error TEXT
);
CREATE INDEX reconcile_runs_started ON reconcile_runs (started_at);

CREATE TABLE reconcile_findings (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES reconcile_runs(id),
    merchant_id BIGINT REFERENCES merchants(id),
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    sku_id BIGINT REFERENCES skus(id),
    warehouse_id BIGINT REFERENCES warehouses(id),
    slot_id BIGINT REFERENCES slots(id),
    expected TEXT NOT NULL,
    found TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('frozen', 'repaired', 'none')),
    status TEXT NOT NULL CHECK (status IN ('OPEN', 'RESOLVED')),
    created_at BIGINT NOT NULL,
    resolved_at BIGINT,
    resolved_by TEXT,
    resolution TEXT
);
CREATE INDEX reconcile_findings_status ON reconcile_findings (status, merchant_id);
CREATE INDEX reconcile_findings_run ON reconcile_findings (run_id);

ALTER TABLE skus ADD COLUMN frozen_finding_id BIGINT REFERENCES reconcile_findings(id);
ALTER TABLE slots ADD COLUMN frozen_finding_id BIGINT REFERENCES reconcile_findings(id);

-- An operator's correction of a balance that changed outside the ledger is booked as its own kind.
ALTER TABLE stock_ledger DROP CONSTRAINT stock_ledger_kind_check;
ALTER TABLE stock_ledger ADD CONSTRAINT stock_ledger_kind_check CHECK (kind IN ('RECEIVE', 'WRITE_OFF', 'COUNT',
    'FREEZE', 'UNFREEZE', 'TRANSFER', 'RESERVE', 'CONFIRM', 'RELEASE', 'EXPIRE', 'RETURN_RESTOCK', 'RETURN_DAMAGED',
    'CORRECTION'));
