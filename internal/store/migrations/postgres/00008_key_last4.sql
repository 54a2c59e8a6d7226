-- +goose Up
-- The last four characters of each key, kept in clear beside its visible
-- prefix so that the portal can list svc_live_AbCd…wxyz: enough to tell
-- keys apart, far too little to use one. Keys made before this show none.
ALTER TABLE api_keys ADD COLUMN last4 TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last4;
