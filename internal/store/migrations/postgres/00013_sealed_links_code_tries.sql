-- +goose Up
-- A payment link's token is no longer kept in clear: token_hash (SHA-256,
-- hex) finds the link from its URL, and url_sealed is the URL sealed under
-- the server secret (bound to the link's ID), opened to show it. The clear
-- token and url stay only for links made before this migration, until the
-- first process that loads the server secret seals them (store.Open) and
-- sets both to NULL.
-- engine-specific: begin
ALTER TABLE payment_links ALTER COLUMN token DROP NOT NULL;
ALTER TABLE payment_links ALTER COLUMN url DROP NOT NULL;
ALTER TABLE payment_links ADD COLUMN token_hash TEXT UNIQUE;
ALTER TABLE payment_links ADD COLUMN url_sealed TEXT;
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
DROP INDEX payment_links_clear;
DELETE FROM payment_links WHERE token IS NULL;
ALTER TABLE payment_links DROP COLUMN url_sealed;
ALTER TABLE payment_links DROP COLUMN token_hash;
ALTER TABLE payment_links ALTER COLUMN url SET NOT NULL;
ALTER TABLE payment_links ALTER COLUMN token SET NOT NULL;
-- engine-specific: end
