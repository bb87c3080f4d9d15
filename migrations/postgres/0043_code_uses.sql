-- Multi-visit passes (次卡, issue 54): a voucher SKU whose code is good for `uses` visits; each
-- redemption at the counter takes one (`codes.uses_taken`), and the last one ends the code
-- REDEEMED. A single-use voucher is a pass of one. A redemption taken by mistake is undone
-- within a window (the code's history keeps both, with the reason).
ALTER TABLE skus ADD COLUMN uses BIGINT NOT NULL DEFAULT 1;
ALTER TABLE codes ADD COLUMN uses_taken BIGINT NOT NULL DEFAULT 0;
UPDATE codes SET uses_taken = 1 WHERE status = 'REDEEMED';

-- A code's history gains the undone redemption.
ALTER TABLE code_events DROP CONSTRAINT code_events_action_check;
ALTER TABLE code_events ADD CONSTRAINT code_events_action_check
    CHECK (action IN ('VOIDED', 'REDEEMED', 'UNREDEEMED', 'REISSUED', 'LOCKED', 'UNLOCKED', 'INVALIDATED'));
