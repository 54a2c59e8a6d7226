-- +goose Up
-- Chat notifications to tenants over LINE. The notice is what the message
-- shows, fixed when it is queued, and retry_key is LINE's X-Line-Retry-Key,
-- one per notification, so however often the job runs the tenant gets the
-- message once.
CREATE TABLE notifications (
    id             TEXT PRIMARY KEY,
    landlord_id    TEXT NOT NULL,
    tenant_id      TEXT NOT NULL,
    bill_id        TEXT,
    type           TEXT NOT NULL,
    text           TEXT,
    notice         TEXT NOT NULL,
    status         TEXT NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    failure_reason TEXT,
    retry_key      TEXT NOT NULL,
    sent_at        BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE INDEX notifications_by_landlord ON notifications (landlord_id, created_at, id);

-- A tenant's link to the chat channel: the code they send to register
-- (null once registered), the LINE user it linked, and, in the sandbox,
-- the one tenant LINE never reaches.
ALTER TABLE tenants ADD COLUMN chat_registration_code TEXT;
ALTER TABLE tenants ADD COLUMN line_user_id TEXT;
ALTER TABLE tenants ADD COLUMN chat_unreachable BOOLEAN NOT NULL DEFAULT FALSE;
CREATE UNIQUE INDEX tenants_registration_code ON tenants (chat_registration_code);

-- LINE webhook events already handled, by webhookEventId, so a redelivery
-- changes nothing.
CREATE TABLE line_events (
    id          TEXT PRIMARY KEY,
    received_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE line_events;
DROP INDEX tenants_registration_code;
ALTER TABLE tenants DROP COLUMN chat_unreachable;
ALTER TABLE tenants DROP COLUMN line_user_id;
ALTER TABLE tenants DROP COLUMN chat_registration_code;
DROP TABLE notifications;
