-- +goose Up
-- A landlord's properties and rooms, counted on the landlord's row: a new
-- property or room is checked against the plan's limits (store.Usage)
-- without counting the landlord's rows, which at 20,000 rooms was most of
-- the work of adding one. Triggers count, so every writer counts: an older
-- binary during a rolling deploy, a sandbox's reset, a benchmark's seeder,
-- an operator's fix by hand.
ALTER TABLE landlords ADD COLUMN properties_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE landlords ADD COLUMN rooms_count BIGINT NOT NULL DEFAULT 0;
UPDATE landlords SET properties_count = (SELECT COUNT(*) FROM properties WHERE properties.landlord_id = landlords.id),
    rooms_count = (SELECT COUNT(*) FROM rooms WHERE rooms.landlord_id = landlords.id);

-- engine-specific: begin
-- +goose StatementBegin
CREATE TRIGGER properties_counted_insert AFTER INSERT ON properties
BEGIN
    UPDATE landlords SET properties_count = properties_count + 1 WHERE id = NEW.landlord_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER properties_counted_delete AFTER DELETE ON properties
BEGIN
    UPDATE landlords SET properties_count = properties_count - 1 WHERE id = OLD.landlord_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER properties_counted_update AFTER UPDATE OF landlord_id ON properties
    WHEN OLD.landlord_id IS NOT NEW.landlord_id
BEGIN
    UPDATE landlords SET properties_count = properties_count - 1 WHERE id = OLD.landlord_id;
    UPDATE landlords SET properties_count = properties_count + 1 WHERE id = NEW.landlord_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER rooms_counted_insert AFTER INSERT ON rooms
BEGIN
    UPDATE landlords SET rooms_count = rooms_count + 1 WHERE id = NEW.landlord_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER rooms_counted_delete AFTER DELETE ON rooms
BEGIN
    UPDATE landlords SET rooms_count = rooms_count - 1 WHERE id = OLD.landlord_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER rooms_counted_update AFTER UPDATE OF landlord_id ON rooms
    WHEN OLD.landlord_id IS NOT NEW.landlord_id
BEGIN
    UPDATE landlords SET rooms_count = rooms_count - 1 WHERE id = OLD.landlord_id;
    UPDATE landlords SET rooms_count = rooms_count + 1 WHERE id = NEW.landlord_id;
END;
-- +goose StatementEnd
-- engine-specific: end

-- +goose Down
-- engine-specific: begin
DROP TRIGGER properties_counted_insert;
DROP TRIGGER properties_counted_delete;
DROP TRIGGER properties_counted_update;
DROP TRIGGER rooms_counted_insert;
DROP TRIGGER rooms_counted_delete;
DROP TRIGGER rooms_counted_update;
-- engine-specific: end
ALTER TABLE landlords DROP COLUMN rooms_count;
ALTER TABLE landlords DROP COLUMN properties_count;
