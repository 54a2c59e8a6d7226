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
-- The count changes at once, in the row's own statement: every writer of
-- a landlord's properties or rooms holds the landlord's row already, or
-- takes it next (Tx.Claim), so the count waits for no one else.
-- +goose StatementBegin
CREATE FUNCTION properties_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE landlords SET properties_count = properties_count - 1 WHERE id = OLD.landlord_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE landlords SET properties_count = properties_count + 1 WHERE id = NEW.landlord_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION rooms_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE landlords SET rooms_count = rooms_count - 1 WHERE id = OLD.landlord_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE landlords SET rooms_count = rooms_count + 1 WHERE id = NEW.landlord_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER properties_counted_insert_delete AFTER INSERT OR DELETE ON properties FOR EACH ROW
    EXECUTE FUNCTION properties_counted();
CREATE TRIGGER properties_counted_update AFTER UPDATE OF landlord_id ON properties FOR EACH ROW
    WHEN (OLD.landlord_id IS DISTINCT FROM NEW.landlord_id)
    EXECUTE FUNCTION properties_counted();
CREATE TRIGGER rooms_counted_insert_delete AFTER INSERT OR DELETE ON rooms FOR EACH ROW
    EXECUTE FUNCTION rooms_counted();
CREATE TRIGGER rooms_counted_update AFTER UPDATE OF landlord_id ON rooms FOR EACH ROW
    WHEN (OLD.landlord_id IS DISTINCT FROM NEW.landlord_id)
    EXECUTE FUNCTION rooms_counted();
-- engine-specific: end

-- +goose Down
-- engine-specific: begin
DROP TRIGGER properties_counted_insert_delete ON properties;
DROP TRIGGER properties_counted_update ON properties;
DROP TRIGGER rooms_counted_insert_delete ON rooms;
DROP TRIGGER rooms_counted_update ON rooms;
DROP FUNCTION properties_counted();
DROP FUNCTION rooms_counted();
-- engine-specific: end
ALTER TABLE landlords DROP COLUMN rooms_count;
ALTER TABLE landlords DROP COLUMN properties_count;
