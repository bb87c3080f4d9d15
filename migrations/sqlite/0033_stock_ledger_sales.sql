-- The stock report's sales over the last 30 days read a merchant's CONFIRM rows by time: without
-- this index every view scanned the merchant's whole ledger, which only grows.
CREATE INDEX stock_ledger_sales ON stock_ledger (merchant_id, created_at) WHERE kind = 'CONFIRM';
