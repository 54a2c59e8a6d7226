-- +goose Up
-- Requests counted per developer and period ("live:2026-11" for the monthly
-- quota, "test:2026-11-22" for the sandbox's daily limit), in Thailand time.
CREATE TABLE usage_counters (
    developer_id TEXT NOT NULL,
    period       TEXT NOT NULL,
    count        BIGINT NOT NULL,
    PRIMARY KEY (developer_id, period)
);

-- +goose Down
DROP TABLE usage_counters;
