-- +goose Up
-- Events' data, webhook deliveries' bodies and chat notices are stored
-- sealed under the server secret ("sealed.v1." then the sealed text): they
-- copy objects that can hold a payment link's URL. Rows stored before are
-- JSON objects, beginning with "{", until the first process that loads the
-- server secret seals them (store.Migrate). These indexes hold just those
-- rows, so that each start finds what is left in clear at once: nothing,
-- once they are sealed.
CREATE INDEX events_clear ON events (id) WHERE substr(data, 1, 1) = '{';
CREATE INDEX webhook_deliveries_clear ON webhook_deliveries (id) WHERE substr(body, 1, 1) = '{';
CREATE INDEX notifications_clear ON notifications (id) WHERE substr(notice, 1, 1) = '{';

-- +goose Down
-- Sealed rows cannot be given their clear text back without the server
-- secret, and the version before cannot read them: sealed events and
-- deliveries (logs kept 30 days) are deleted. A sealed notice is read only
-- to send a notification still queued; such a send fails on that version.
DROP INDEX notifications_clear;
DROP INDEX webhook_deliveries_clear;
DROP INDEX events_clear;
DELETE FROM webhook_deliveries WHERE substr(body, 1, 1) <> '{';
DELETE FROM events WHERE substr(data, 1, 1) <> '{';
