-- The audit page lists newest first (by id) within a merchant, or across merchants by action.
CREATE INDEX audit_log_merchant_id ON audit_log (merchant_id, id);
CREATE INDEX audit_log_action_id ON audit_log (action, id);
