-- +goose Up
-- Usage flags on meter readings (issue 32): a JSON array of the flags a
-- reading was given when it was recorded or last corrected (usage_high,
-- usage_zero), '[]' when none. Readings recorded before flags existed
-- keep '[]': their flags judged the room's occupancy at the time, which
-- no row remembers; a correction judges them anew.
ALTER TABLE meter_readings ADD COLUMN flags TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE meter_readings DROP COLUMN flags;
