-- +goose Up
-- The open event streams (GET /v1/events/stream) of each application and
-- mode, at most 5: a stream holds one of the 5 slots, leased and renewed
-- while it is open, so that every process counts the same streams and a
-- process that dies frees its slots when their leases end.
CREATE TABLE event_streams (
    application_id TEXT NOT NULL,
    mode           TEXT NOT NULL,
    slot           INTEGER NOT NULL,
    id             TEXT NOT NULL,
    expires_at     BIGINT NOT NULL,
    PRIMARY KEY (application_id, mode, slot)
);

-- +goose Down
DROP TABLE event_streams;
