-- People in the back office (issue 20): a merchant admin invites a person by a one-time link, with
-- a role and (for staff) a store. The link's token is stored hashed (SHA-256) and works once,
-- within its expiry; accepting it creates the user in the same transaction.
CREATE TABLE invitations (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    email TEXT NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL CHECK (role IN ('merchant_admin', 'store_staff')),
    store_id BIGINT REFERENCES stores(id),
    token_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    accepted_at BIGINT,
    revoked_at BIGINT,
    CHECK ((role = 'merchant_admin' AND store_id IS NULL) OR (role = 'store_staff' AND store_id IS NOT NULL))
);
CREATE INDEX invitations_merchant ON invitations (merchant_id, id);

-- Sessions signed in before this instant (unix ms) are ended: set when a password is reset or
-- changed and when a person is deactivated, so that it takes effect on their next request.
ALTER TABLE users ADD COLUMN sessions_valid_after BIGINT NOT NULL DEFAULT 0;
