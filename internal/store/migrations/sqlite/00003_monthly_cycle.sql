-- +goose Up
-- Tenants, meters, monthly readings, bills and payments. Meter values are
-- thousandths of a unit (BIGINT), money is satang, times Unix milliseconds.
CREATE TABLE tenants (
    id              TEXT PRIMARY KEY,
    landlord_id     TEXT NOT NULL REFERENCES landlords (id),
    property_id     TEXT NOT NULL,
    room_id         TEXT NOT NULL,
    name            TEXT NOT NULL,
    phone           TEXT NOT NULL,
    email           TEXT,
    chat_enabled    BOOLEAN NOT NULL,
    chat_registered BOOLEAN NOT NULL DEFAULT FALSE,
    occupants       INTEGER NOT NULL DEFAULT 1,
    moved_in_at     BIGINT NOT NULL,
    moved_out_at    BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX tenants_current ON tenants (room_id) WHERE moved_out_at IS NULL;
CREATE INDEX tenants_page ON tenants (landlord_id, created_at, id);

CREATE TABLE meters (
    id          TEXT PRIMARY KEY,
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    property_id TEXT NOT NULL,
    room_id     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (room_id, kind)
);
CREATE INDEX meters_page ON meters (landlord_id, created_at, id);

CREATE TABLE meter_readings (
    id                TEXT PRIMARY KEY,
    landlord_id       TEXT NOT NULL REFERENCES landlords (id),
    property_id       TEXT NOT NULL,
    room_id           TEXT NOT NULL,
    month             TEXT NOT NULL,
    e_previous        BIGINT NOT NULL,
    e_current         BIGINT NOT NULL,
    e_rollover        BOOLEAN NOT NULL,
    e_rate            BIGINT NOT NULL,
    w_previous        BIGINT NOT NULL,
    w_current         BIGINT NOT NULL,
    w_rollover        BOOLEAN NOT NULL,
    w_rate            BIGINT NOT NULL,
    w_billing         TEXT NOT NULL,
    w_flat_amount     BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (room_id, month)
);
CREATE INDEX meter_readings_page ON meter_readings (landlord_id, created_at, id);

CREATE TABLE bills (
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
    UNIQUE (room_id, month)
);
CREATE INDEX bills_page ON bills (landlord_id, created_at, id);
CREATE INDEX bills_due ON bills (status, due_date);

CREATE TABLE payments (
    id              TEXT PRIMARY KEY,
    landlord_id     TEXT NOT NULL REFERENCES landlords (id),
    bill_id         TEXT NOT NULL,
    payment_link_id TEXT,
    status          TEXT NOT NULL,
    amount          BIGINT NOT NULL,
    amount_paid     BIGINT NOT NULL DEFAULT 0,
    qr_payload      TEXT NOT NULL,
    provider_ref    TEXT,
    failure_reason  TEXT,
    expires_at      BIGINT NOT NULL,
    paid_at         BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX payments_page ON payments (landlord_id, created_at, id);
CREATE INDEX payments_bill ON payments (bill_id);

CREATE INDEX rooms_property ON rooms (property_id);

-- +goose Down
DROP INDEX rooms_property;
DROP TABLE payments;
DROP TABLE bills;
DROP TABLE meter_readings;
DROP TABLE meters;
DROP TABLE tenants;
