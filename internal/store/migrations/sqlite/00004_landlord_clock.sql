-- +goose Up
-- The landlord's clock: the last creation time (Unix ms) handed to one of
-- its write transactions. Taken under the landlord's row lock, it makes
-- creation times follow commit order, so keyset pages never skip a row.
ALTER TABLE landlords ADD COLUMN clock BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE landlords DROP COLUMN clock;
