-- +goose Up
-- Times are Unix milliseconds; booleans are 0/1. Keep this file and its
-- postgres twin in step: the same tables, columns and indexes.
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE developers (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    plan            TEXT NOT NULL,
    suspended       BOOLEAN NOT NULL DEFAULT FALSE,
    invoice_overdue BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      BIGINT NOT NULL
);

CREATE TABLE landlords (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    plan        TEXT NOT NULL,
    qr_payments BOOLEAN NOT NULL,
    sandbox     BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE applications (
    id                 TEXT PRIMARY KEY,
    developer_id       TEXT NOT NULL REFERENCES developers (id),
    name               TEXT NOT NULL,
    company            TEXT NOT NULL,
    disabled           BOOLEAN NOT NULL DEFAULT FALSE,
    scopes             TEXT NOT NULL,
    redirect_uris      TEXT NOT NULL DEFAULT '[]',
    sandbox_account_id TEXT NOT NULL UNIQUE,
    created_at         BIGINT NOT NULL
);

CREATE TABLE accounts (
    id             TEXT PRIMARY KEY,
    application_id TEXT NOT NULL REFERENCES applications (id),
    landlord_id    TEXT NOT NULL REFERENCES landlords (id),
    sandbox        BOOLEAN NOT NULL,
    scopes         TEXT NOT NULL,
    revoked_at     BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    UNIQUE (application_id, landlord_id)
);

CREATE TABLE api_keys (
    id             TEXT PRIMARY KEY,
    application_id TEXT NOT NULL REFERENCES applications (id),
    name           TEXT NOT NULL,
    mode           TEXT NOT NULL,
    prefix         TEXT NOT NULL,
    fingerprint    TEXT NOT NULL UNIQUE,
    scopes         TEXT NOT NULL,
    account_id     TEXT REFERENCES accounts (id),
    expires_at     BIGINT,
    revoked_at     BIGINT,
    rotated_from   TEXT,
    created_at     BIGINT NOT NULL
);
CREATE INDEX api_keys_application ON api_keys (application_id);

CREATE TABLE properties (
    id                TEXT PRIMARY KEY,
    landlord_id       TEXT NOT NULL REFERENCES landlords (id),
    name              TEXT NOT NULL,
    address           TEXT NOT NULL,
    electricity_rate  BIGINT NOT NULL,
    water_billing     TEXT NOT NULL,
    water_rate        BIGINT NOT NULL,
    water_flat_amount BIGINT,
    due_day           INTEGER NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX properties_page ON properties (landlord_id, created_at, id);

CREATE TABLE rooms (
    id           TEXT PRIMARY KEY,
    landlord_id  TEXT NOT NULL REFERENCES landlords (id),
    property_id  TEXT NOT NULL REFERENCES properties (id),
    number       TEXT NOT NULL,
    floor        INTEGER,
    monthly_rent BIGINT NOT NULL,
    status       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (property_id, number)
);
CREATE INDEX rooms_page ON rooms (landlord_id, created_at, id);

CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    mode        TEXT NOT NULL,
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX events_page ON events (landlord_id, created_at, id);
CREATE INDEX events_age ON events (created_at);

CREATE TABLE idempotency_keys (
    application_id TEXT NOT NULL,
    account_id     TEXT NOT NULL,
    key            TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    done           BOOLEAN NOT NULL DEFAULT FALSE,
    locked_at      BIGINT NOT NULL,
    status_code    INTEGER,
    header         TEXT,
    body           BLOB,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    PRIMARY KEY (application_id, account_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (expires_at);
