-- +goose Up
-- Bill lines, other charges and discounts (issue 32). A bill keeps its
-- lines as a JSON array of {type, description, amount} (with charge_id and
-- full for the lines a charge made): a bill is read with its lines in one
-- row, and they are written with the bill's amounts in one statement.
-- Bills made before lines existed get theirs from their amounts here.
ALTER TABLE bills ADD COLUMN lines TEXT NOT NULL DEFAULT '[]';
UPDATE bills SET lines = '[{"type":"rent","description":"Rent","amount":' || rent ||
    '},{"type":"electricity","description":"Electricity","amount":' || e_amount ||
    '},{"type":"water","description":"Water","amount":' || w_amount || '}]';

-- A room's other charges and discounts, one-off (in month) or recurring
-- (from month to ends_month, or on and on while it is NULL).
CREATE TABLE charges (
    id          TEXT PRIMARY KEY,
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    property_id TEXT NOT NULL,
    room_id     TEXT NOT NULL,
    type        TEXT NOT NULL,
    description TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    recurring   BOOLEAN NOT NULL,
    month       TEXT NOT NULL,
    ends_month  TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX charges_page ON charges (landlord_id, created_at, id);
CREATE INDEX charges_room ON charges (room_id, month);

-- +goose Down
DROP TABLE charges;
ALTER TABLE bills DROP COLUMN lines;
