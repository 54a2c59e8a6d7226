-- +goose Up
-- A landlord's data version: one more at every write of the landlord's
-- data (every such write claims the landlord's row first, see Tx.Claim),
-- and never back, unlike the clock, which a sandbox's reset returns to
-- real time. A GET's ETag is made from it (with the caller and the URL),
-- so that If-None-Match is answered without making the answer.
ALTER TABLE landlords ADD COLUMN data_version BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE landlords DROP COLUMN data_version;
