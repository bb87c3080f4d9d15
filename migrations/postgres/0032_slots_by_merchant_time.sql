-- A catalog's verdicts read a merchant's slots of the coming week (issue 20): by merchant and
-- start, so that the read covers the week's slots only, not every slot the merchant ever had.
CREATE INDEX slots_merchant_time ON slots (merchant_id, starts_at);
