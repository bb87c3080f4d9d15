-- Requests per second an API key may make (issue 18): NULL takes the instance's default
-- (SELLABLE_API_RATE_PER_SECOND); 0 is unlimited (a load generator's key, say).
ALTER TABLE api_keys ADD COLUMN rate_per_second BIGINT;
