-- +goose Up
-- The sandbox's clock: how far (ms) a sandbox runs ahead of real time,
-- 0 until a developer advances it (POST /v1/test-helpers/clock/advance).
-- A claim of the landlord (store's Tx.Claim) adds it to real time, so every
-- write of the sandbox, and every job run for it, takes its "now" from it;
-- a live landlord's stays 0.
ALTER TABLE landlords ADD COLUMN clock_offset BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE landlords DROP COLUMN clock_offset;
