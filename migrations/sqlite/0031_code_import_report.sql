-- What an import changed beside the codes it stored (issue 20): blank lines skipped, codes
-- stored without the spaces they were typed with (their lines, in code_import_notes), and the
-- characters a batch allows (any, or a named rule: see code_import::Allowed).
ALTER TABLE code_batches ADD COLUMN blank_lines BIGINT NOT NULL DEFAULT 0;
ALTER TABLE code_batches ADD COLUMN normalised BIGINT NOT NULL DEFAULT 0;
ALTER TABLE code_batches ADD COLUMN allowed TEXT NOT NULL DEFAULT 'any';

-- One row per line whose code was stored changed (never the code itself).
CREATE TABLE code_import_notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    batch_id BIGINT NOT NULL REFERENCES code_batches(id),
    line BIGINT NOT NULL,
    note TEXT NOT NULL
);
CREATE INDEX code_import_notes_batch ON code_import_notes (batch_id, line);
