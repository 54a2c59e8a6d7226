-- +goose Up
-- The API's requests of each application for the last 7 days, for the
-- developer portal's Requests page: what was asked and answered, never a
-- body (bodies hold tenants' personal data) nor a query string. Written in
-- batches after the answers, and deleted after 7 days by the retention job.
CREATE TABLE request_log (
    -- The request's ID, found among its application's (no index of its
    -- own: a write of every request is the cost that counts here).
    id             TEXT NOT NULL,
    -- seq orders a process's requests of one instant as they were
    -- answered.
    seq            BIGINT NOT NULL,
    application_id TEXT NOT NULL,
    mode           TEXT NOT NULL,
    account_id     TEXT NOT NULL,
    method         TEXT NOT NULL,
    path           TEXT NOT NULL,
    status         INTEGER NOT NULL,
    code           TEXT NOT NULL,
    latency_us     BIGINT NOT NULL,
    key_last4      TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);
CREATE INDEX request_log_by_application ON request_log (application_id, created_at, seq);

-- +goose Down
DROP TABLE request_log;
