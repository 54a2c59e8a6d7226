-- +goose Up
-- A room's month may have two bills: the final bill of a tenant who moved
-- out during it, and the bill of the tenant who moved in after. One bill
-- per room, month and tenant (a room billed with nobody in it counts as
-- one more tenant). SQLite cannot drop a table's UNIQUE constraint: the
-- table is made again without it, with the same columns and indexes
-- (on both engines, so that their schemas stay one).
CREATE TABLE bills_rebuilt (
    id            TEXT PRIMARY KEY,
    landlord_id   TEXT NOT NULL REFERENCES landlords (id),
    property_id   TEXT NOT NULL,
    room_id       TEXT NOT NULL,
    tenant_id     TEXT,
    reading_id    TEXT NOT NULL,
    month         TEXT NOT NULL,
    status        TEXT NOT NULL,
    rent          BIGINT NOT NULL,
    e_usage       BIGINT NOT NULL,
    e_rate        BIGINT NOT NULL,
    e_amount      BIGINT NOT NULL,
    w_usage       BIGINT NOT NULL,
    w_rate        BIGINT NOT NULL,
    w_amount      BIGINT NOT NULL,
    w_billing     TEXT NOT NULL,
    occupants     INTEGER NOT NULL,
    total         BIGINT NOT NULL,
    amount_paid   BIGINT NOT NULL DEFAULT 0,
    due_date      TEXT NOT NULL,
    issued_at     BIGINT,
    paid_at       BIGINT,
    overdue_at    BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    receipt_number     TEXT,
    receipt_issued_at  BIGINT,
    receipt_token_hash TEXT,
    receipt_url        TEXT,
    lines              TEXT NOT NULL DEFAULT '[]',
    late_fee           TEXT,
    late_fee_amount    BIGINT NOT NULL DEFAULT 0,
    late_fee_next      TEXT
);
INSERT INTO bills_rebuilt (id, landlord_id, property_id, room_id, tenant_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
    w_usage, w_rate, w_amount, w_billing, occupants, total, amount_paid, due_date, issued_at, paid_at, overdue_at, created_at, updated_at,
    receipt_number, receipt_issued_at, receipt_token_hash, receipt_url, lines, late_fee, late_fee_amount, late_fee_next)
SELECT id, landlord_id, property_id, room_id, tenant_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
    w_usage, w_rate, w_amount, w_billing, occupants, total, amount_paid, due_date, issued_at, paid_at, overdue_at, created_at, updated_at,
    receipt_number, receipt_issued_at, receipt_token_hash, receipt_url, lines, late_fee, late_fee_amount, late_fee_next FROM bills;
DROP TABLE bills;
ALTER TABLE bills_rebuilt RENAME TO bills;
CREATE INDEX bills_page ON bills (landlord_id, created_at, id);
CREATE INDEX bills_due ON bills (status, due_date);
CREATE INDEX bills_reading ON bills (reading_id);
CREATE UNIQUE INDEX bills_receipt_number ON bills (landlord_id, receipt_number) WHERE receipt_number IS NOT NULL;
CREATE UNIQUE INDEX bills_receipt_token ON bills (receipt_token_hash) WHERE receipt_token_hash IS NOT NULL;
CREATE INDEX bills_late_fee_due ON bills (late_fee_next, landlord_id) WHERE late_fee_next IS NOT NULL;
CREATE INDEX bills_late_fee ON bills (landlord_id, late_fee_next, id) WHERE late_fee_next IS NOT NULL;
CREATE INDEX bills_landlord_due ON bills (landlord_id, due_date);
CREATE INDEX bills_tenant ON bills (tenant_id);
CREATE UNIQUE INDEX bills_room_month ON bills (room_id, month, COALESCE(tenant_id, ''));

-- +goose Down
CREATE TABLE bills_rebuilt (
    id            TEXT PRIMARY KEY,
    landlord_id   TEXT NOT NULL REFERENCES landlords (id),
    property_id   TEXT NOT NULL,
    room_id       TEXT NOT NULL,
    tenant_id     TEXT,
    reading_id    TEXT NOT NULL,
    month         TEXT NOT NULL,
    status        TEXT NOT NULL,
    rent          BIGINT NOT NULL,
    e_usage       BIGINT NOT NULL,
    e_rate        BIGINT NOT NULL,
    e_amount      BIGINT NOT NULL,
    w_usage       BIGINT NOT NULL,
    w_rate        BIGINT NOT NULL,
    w_amount      BIGINT NOT NULL,
    w_billing     TEXT NOT NULL,
    occupants     INTEGER NOT NULL,
    total         BIGINT NOT NULL,
    amount_paid   BIGINT NOT NULL DEFAULT 0,
    due_date      TEXT NOT NULL,
    issued_at     BIGINT,
    paid_at       BIGINT,
    overdue_at    BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    receipt_number     TEXT,
    receipt_issued_at  BIGINT,
    receipt_token_hash TEXT,
    receipt_url        TEXT,
    lines              TEXT NOT NULL DEFAULT '[]',
    late_fee           TEXT,
    late_fee_amount    BIGINT NOT NULL DEFAULT 0,
    late_fee_next      TEXT,
    UNIQUE (room_id, month)
);
INSERT INTO bills_rebuilt (id, landlord_id, property_id, room_id, tenant_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
    w_usage, w_rate, w_amount, w_billing, occupants, total, amount_paid, due_date, issued_at, paid_at, overdue_at, created_at, updated_at,
    receipt_number, receipt_issued_at, receipt_token_hash, receipt_url, lines, late_fee, late_fee_amount, late_fee_next)
SELECT id, landlord_id, property_id, room_id, tenant_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
    w_usage, w_rate, w_amount, w_billing, occupants, total, amount_paid, due_date, issued_at, paid_at, overdue_at, created_at, updated_at,
    receipt_number, receipt_issued_at, receipt_token_hash, receipt_url, lines, late_fee, late_fee_amount, late_fee_next FROM bills;
DROP TABLE bills;
ALTER TABLE bills_rebuilt RENAME TO bills;
CREATE INDEX bills_page ON bills (landlord_id, created_at, id);
CREATE INDEX bills_due ON bills (status, due_date);
CREATE INDEX bills_reading ON bills (reading_id);
CREATE UNIQUE INDEX bills_receipt_number ON bills (landlord_id, receipt_number) WHERE receipt_number IS NOT NULL;
CREATE UNIQUE INDEX bills_receipt_token ON bills (receipt_token_hash) WHERE receipt_token_hash IS NOT NULL;
CREATE INDEX bills_late_fee_due ON bills (late_fee_next, landlord_id) WHERE late_fee_next IS NOT NULL;
CREATE INDEX bills_late_fee ON bills (landlord_id, late_fee_next, id) WHERE late_fee_next IS NOT NULL;
CREATE INDEX bills_landlord_due ON bills (landlord_id, due_date);
CREATE INDEX bills_tenant ON bills (tenant_id);
