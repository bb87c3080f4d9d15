-- Foundation: tenants, users, sessions, API keys, audit log, catalog.
-- Times are unix milliseconds (BIGINT), money is minor units (BIGINT), flags are SMALLINT 0/1:
-- the sqlx Any driver only carries integers, reals, text and blobs across both dialects.

CREATE TABLE merchants (
    id BIGSERIAL PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    currency TEXT NOT NULL DEFAULT 'CNY',
    -- Merchant-level times (sale windows) are entered and shown in this zone.
    timezone TEXT NOT NULL DEFAULT 'UTC',
    created_at BIGINT NOT NULL
);

CREATE TABLE stores (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    timezone TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (merchant_id, slug)
);

CREATE TABLE warehouses (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    priority BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE (merchant_id, slug)
);

CREATE TABLE users (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('operator', 'merchant_admin', 'store_staff')),
    merchant_id BIGINT REFERENCES merchants(id),
    store_id BIGINT REFERENCES stores(id),
    disabled SMALLINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    CHECK ((role = 'operator' AND merchant_id IS NULL AND store_id IS NULL)
        OR (role = 'merchant_admin' AND merchant_id IS NOT NULL AND store_id IS NULL)
        OR (role = 'store_staff' AND merchant_id IS NOT NULL AND store_id IS NOT NULL))
);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- Failed sign-ins, counted per key ("ip:…" or "account:…") over a sliding window.
-- Kept in SQL so every instance behind a load balancer sees the same count.
CREATE TABLE login_failures (
    id BIGSERIAL PRIMARY KEY,
    throttle_key TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX login_failures_key_at ON login_failures (throttle_key, at);

CREATE TABLE api_keys (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT
);

CREATE TABLE audit_log (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    at BIGINT NOT NULL
);
CREATE INDEX audit_log_merchant_at ON audit_log (merchant_id, at);

CREATE TABLE products (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('goods', 'voucher', 'service')),
    status TEXT NOT NULL CHECK (status IN ('DRAFT', 'ONLINE', 'OFFLINE')),
    sale_starts_at BIGINT,
    sale_ends_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CHECK (sale_starts_at IS NULL OR sale_ends_at IS NULL OR sale_starts_at < sale_ends_at)
);
CREATE INDEX products_merchant ON products (merchant_id, id);

CREATE TABLE skus (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    product_id BIGINT NOT NULL REFERENCES products(id),
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    price BIGINT NOT NULL CHECK (price >= 0),
    unit_type TEXT NOT NULL CHECK (unit_type IN ('quantity', 'code', 'slot')),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT skus_merchant_code UNIQUE (merchant_id, code)
);
CREATE INDEX skus_product ON skus (product_id);
