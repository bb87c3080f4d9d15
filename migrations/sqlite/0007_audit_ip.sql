-- "From where" in the audit trail: besides the page or API route (source), the client address
-- the request came from ('' for the CLI, jobs and rows written before this column).
ALTER TABLE audit_log ADD COLUMN ip TEXT NOT NULL DEFAULT '';
