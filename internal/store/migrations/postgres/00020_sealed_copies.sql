-- +goose Up
-- Events' data, webhook deliveries' bodies and chat notices that hold a
-- payment link's URL (they name the links' path, /pay/) are stored sealed
-- under the server secret: "sealed.v1." then the sealed text, which holds
-- no "/". Rows stored before are JSON in clear until the first process that
-- loads the server secret seals them (store.Migrate). These indexes hold
-- just the rows left to seal, so that each start finds them at once: none,
-- once they are sealed.
CREATE INDEX events_clear ON events (id) WHERE data LIKE '%/pay/%';
CREATE INDEX webhook_deliveries_clear ON webhook_deliveries (id) WHERE body LIKE '%/pay/%';
CREATE INDEX notifications_clear ON notifications (id) WHERE notice LIKE '%/pay/%';

-- +goose Down
-- Sealed rows cannot be given their clear text back without the server
-- secret, and the version before cannot read them: sealed events and
-- deliveries (logs kept 30 days) are deleted. A sealed notice is read only
-- to send a notification still queued; such a send fails on that version.
DROP INDEX notifications_clear;
DROP INDEX webhook_deliveries_clear;
DROP INDEX events_clear;
DELETE FROM webhook_deliveries WHERE body LIKE 'sealed.v1.%';
DELETE FROM events WHERE data LIKE 'sealed.v1.%';
