-- +goose Up
-- Deposits, proration and move-out (issue 33). A tenant keeps the deposit
-- taken at move-in (satang; 0 for tenants from before) and the date the
-- lease runs to (YYYY-MM-DD, NULL for none); a property how the rent of a
-- month lived in part is billed ('none' for properties from before).
ALTER TABLE tenants ADD COLUMN deposit BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN lease_end TEXT;
ALTER TABLE properties ADD COLUMN proration TEXT NOT NULL DEFAULT 'none';

-- A tenancy's settlement at move-out: the deposit against the unpaid bills
-- (a JSON array of {bill_id, amount_due}) and the deductions (a JSON array
-- of {description, amount}), as of moving out. One a tenant: a second
-- move-out of the same tenancy cannot make another.
CREATE TABLE settlements (
    id              TEXT PRIMARY KEY,
    landlord_id     TEXT NOT NULL REFERENCES landlords (id),
    property_id     TEXT NOT NULL,
    room_id         TEXT NOT NULL,
    tenant_id       TEXT NOT NULL UNIQUE,
    deposit         BIGINT NOT NULL,
    unpaid_bills    TEXT NOT NULL,
    deductions      TEXT NOT NULL,
    refund_amount   BIGINT NOT NULL,
    amount_due      BIGINT NOT NULL,
    refund_due_date TEXT NOT NULL,
    status          TEXT NOT NULL,
    closed_at       BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX settlements_page ON settlements (landlord_id, created_at, id);

-- +goose Down
DROP TABLE settlements;
ALTER TABLE properties DROP COLUMN proration;
ALTER TABLE tenants DROP COLUMN lease_end;
ALTER TABLE tenants DROP COLUMN deposit;
