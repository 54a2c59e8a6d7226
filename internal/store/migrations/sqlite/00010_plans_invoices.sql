-- +goose Up
-- A developer's plan change: an upgrade replaces plan at once; a downgrade
-- waits in pending_plan until pending_from (Unix ms: 00:00 on the 1st of
-- the next month, Thailand time), and from then on it is the plan in effect
-- (rental.EffectivePlan) whether or not anything has written it into plan.
ALTER TABLE developers ADD COLUMN pending_plan TEXT;
ALTER TABLE developers ADD COLUMN pending_from BIGINT;

-- Requests counted per developer, mode, Thailand day and application: the
-- monthly quota is the sum of a month's live rows, the sandbox's daily limit
-- a day's test rows, and the portal's usage page shows the rows themselves.
-- application_id is '' for counts made before applications were told apart.
CREATE TABLE usage_days (
    developer_id   TEXT NOT NULL,
    mode           TEXT NOT NULL,
    day            TEXT NOT NULL,
    application_id TEXT NOT NULL,
    count          BIGINT NOT NULL,
    PRIMARY KEY (developer_id, mode, day, application_id)
);
INSERT INTO usage_days (developer_id, mode, day, application_id, count)
    SELECT developer_id, 'live', substr(period, 6) || '-01', '', count FROM usage_counters WHERE period LIKE 'live:%';
INSERT INTO usage_days (developer_id, mode, day, application_id, count)
    SELECT developer_id, 'test', substr(period, 6), '', count FROM usage_counters WHERE period LIKE 'test:%';
DROP TABLE usage_counters;

-- A developer's monthly invoice: one per developer and month (the unique
-- key that makes the monthly close happen once however often it runs),
-- numbered INV-YYYY-NNNNNN without gaps per year of issue from
-- invoice_numbers, updated in the same transaction. Lines are JSON; amounts
-- are satang. The buyer is copied at issue: an invoice does not change.
CREATE TABLE invoices (
    id             TEXT PRIMARY KEY,
    number         TEXT NOT NULL UNIQUE,
    developer_id   TEXT NOT NULL REFERENCES developers (id),
    month          TEXT NOT NULL,
    plan           TEXT NOT NULL,
    lines          TEXT NOT NULL,
    total          BIGINT NOT NULL,
    currency       TEXT NOT NULL,
    status         TEXT NOT NULL,
    buyer_name     TEXT NOT NULL,
    buyer_email    TEXT NOT NULL,
    buyer_company  TEXT NOT NULL,
    issued_at      BIGINT NOT NULL,
    due_at         BIGINT NOT NULL,
    paid_at        BIGINT,
    voided_at      BIGINT,
    UNIQUE (developer_id, month)
);
-- The key lookup asks, on every request, whether the developer has an open
-- invoice past due: this index answers it.
CREATE INDEX invoices_open ON invoices (developer_id, due_at) WHERE status = 'open';

CREATE TABLE invoice_numbers (
    year INTEGER PRIMARY KEY,
    last BIGINT NOT NULL
);

-- +goose Down
DROP TABLE invoice_numbers;
DROP TABLE invoices;
CREATE TABLE usage_counters (
    developer_id TEXT NOT NULL,
    period       TEXT NOT NULL,
    count        BIGINT NOT NULL,
    PRIMARY KEY (developer_id, period)
);
DROP TABLE usage_days;
ALTER TABLE developers DROP COLUMN pending_from;
ALTER TABLE developers DROP COLUMN pending_plan;
