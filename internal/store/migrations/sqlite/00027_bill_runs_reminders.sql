-- +goose Up
-- The month of a whole property and scheduled reminders (issue 32).
-- What made a notification: a request (api), the daily reminders
-- (schedule) or a bill run (bill_run); every one before was a request.
ALTER TABLE notifications ADD COLUMN triggered_by TEXT NOT NULL DEFAULT 'api';
-- When its first attempt is due, on the landlord's clock: at once for a
-- request, at its paced slot for a bill run's or the schedule's notice.
ALTER TABLE notifications ADD COLUMN send_at BIGINT NOT NULL DEFAULT 0;
UPDATE notifications SET send_at = created_at;
-- The day (YYYY-MM-DD, Thailand time) of a scheduled reminder: one per
-- bill and day, whatever the number of processes.
ALTER TABLE notifications ADD COLUMN reminder_day TEXT;
CREATE UNIQUE INDEX notifications_reminder ON notifications (bill_id, reminder_day) WHERE reminder_day IS NOT NULL;

-- A property's reminder schedule as JSON ({before_due_days,
-- after_due_days}); NULL when reminders are off.
ALTER TABLE properties ADD COLUMN reminders TEXT;

-- The landlord's next free send slot (ms, on its clock) for paced notices,
-- taken under the landlord's claim; and the last day whose scheduled
-- reminders were queued, so the every-minute sweep passes over it.
ALTER TABLE landlords ADD COLUMN send_slot BIGINT NOT NULL DEFAULT 0;
ALTER TABLE landlords ADD COLUMN reminders_day TEXT;

-- A bill run loads a property's month in a query each: its readings,
-- current tenants and charges.
CREATE INDEX meter_readings_property ON meter_readings (property_id, month);
CREATE INDEX tenants_property ON tenants (property_id) WHERE moved_out_at IS NULL;
CREATE INDEX charges_property ON charges (property_id);
-- The reminder sweep reads a landlord's bills due on a few dates.
CREATE INDEX bills_landlord_due ON bills (landlord_id, due_date);

-- +goose Down
DROP INDEX bills_landlord_due;
DROP INDEX charges_property;
DROP INDEX tenants_property;
DROP INDEX meter_readings_property;
ALTER TABLE landlords DROP COLUMN reminders_day;
ALTER TABLE landlords DROP COLUMN send_slot;
ALTER TABLE properties DROP COLUMN reminders;
DROP INDEX notifications_reminder;
ALTER TABLE notifications DROP COLUMN reminder_day;
ALTER TABLE notifications DROP COLUMN send_at;
ALTER TABLE notifications DROP COLUMN triggered_by;
