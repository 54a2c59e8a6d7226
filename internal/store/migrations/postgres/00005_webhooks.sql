-- +goose Up
-- Webhook endpoints belong to an application and one mode. The signing
-- secrets are sealed under the server secret; the old one keeps signing
-- until old_secret_until after a rotation.
CREATE TABLE webhook_endpoints (
    id               TEXT PRIMARY KEY,
    application_id   TEXT NOT NULL REFERENCES applications (id),
    mode             TEXT NOT NULL,
    url              TEXT NOT NULL,
    enabled_events   TEXT NOT NULL,
    description      TEXT,
    status           TEXT NOT NULL,
    disabled_reason  TEXT,
    secret           TEXT NOT NULL,
    old_secret       TEXT,
    old_secret_until BIGINT,
    failing_since    BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_page ON webhook_endpoints (application_id, mode, created_at, id);

-- One row per event and endpoint; body is the event exactly as sent.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    generation      INTEGER NOT NULL DEFAULT 1,
    next_attempt_at BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_page ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_age ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
    delivery_id   TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt       INTEGER NOT NULL,
    attempted_at  BIGINT NOT NULL,
    status_code   INTEGER,
    duration_ms   BIGINT NOT NULL,
    error         TEXT,
    response_body TEXT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);

-- Each event looks up the landlord's links to find their endpoints.
CREATE INDEX accounts_landlord ON accounts (landlord_id);

-- An event only one application may see (webhook.test); NULL for the rest.
ALTER TABLE events ADD COLUMN application_id TEXT;

-- +goose Down
ALTER TABLE events DROP COLUMN application_id;
DROP INDEX accounts_landlord;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
