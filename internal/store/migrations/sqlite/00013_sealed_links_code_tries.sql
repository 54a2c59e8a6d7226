-- +goose Up
-- A payment link's token is no longer kept in clear: token_hash (SHA-256,
-- hex) finds the link from its URL, and url_sealed is the URL sealed under
-- the server secret (bound to the link's ID), opened to show it. The clear
-- token and url stay only for links made before this migration, until the
-- first process that loads the server secret seals them (store.Open) and
-- sets both to NULL. SQLite cannot drop a UNIQUE column's NOT NULL, so the
-- table is made anew.
-- engine-specific: begin
CREATE TABLE payment_links_sealed (
    id          TEXT PRIMARY KEY,
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    bill_id     TEXT NOT NULL,
    token       TEXT UNIQUE,
    url         TEXT,
    token_hash  TEXT UNIQUE,
    url_sealed  TEXT,
    active      BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
INSERT INTO payment_links_sealed (id, landlord_id, bill_id, token, url, active, created_at, updated_at)
    SELECT id, landlord_id, bill_id, token, url, active, created_at, updated_at FROM payment_links;
DROP TABLE payment_links;
ALTER TABLE payment_links_sealed RENAME TO payment_links;
CREATE UNIQUE INDEX payment_links_active ON payment_links (bill_id) WHERE active;
CREATE INDEX payment_links_landlord ON payment_links (landlord_id);
-- engine-specific: end
CREATE INDEX payment_links_clear ON payment_links (id) WHERE token IS NOT NULL;

-- Each LINE user's wrong registration codes in the current window
-- (rental.CodeTries): window_start in Unix ms, wrong the count.
CREATE TABLE line_code_tries (
    line_user_id TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    wrong        INTEGER NOT NULL
);

-- +goose Down
-- Links sealed since cannot be given their clear token back: they are
-- deleted, and their bills need new links.
DROP TABLE line_code_tries;
-- engine-specific: begin
DELETE FROM payment_links WHERE token IS NULL;
CREATE TABLE payment_links_clear (
    id          TEXT PRIMARY KEY,
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    bill_id     TEXT NOT NULL,
    token       TEXT NOT NULL UNIQUE,
    url         TEXT NOT NULL,
    active      BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
INSERT INTO payment_links_clear (id, landlord_id, bill_id, token, url, active, created_at, updated_at)
    SELECT id, landlord_id, bill_id, token, url, active, created_at, updated_at FROM payment_links;
DROP TABLE payment_links;
ALTER TABLE payment_links_clear RENAME TO payment_links;
CREATE UNIQUE INDEX payment_links_active ON payment_links (bill_id) WHERE active;
CREATE INDEX payment_links_landlord ON payment_links (landlord_id);
-- engine-specific: end
