-- +goose Up
-- The tenants who lived in a room in a month (a bill's tenant, its
-- proration) are looked up by room, or by property for a bill run, among
-- those moved out too; the partial indexes of current tenants cannot serve
-- that, and without these a bill read every tenant the landlord ever had.
-- A settlement reads a tenant's bills.
CREATE INDEX tenants_room_history ON tenants (room_id, moved_in_at);
CREATE INDEX tenants_property_history ON tenants (property_id, moved_in_at);
CREATE INDEX bills_tenant ON bills (tenant_id);

-- +goose Down
DROP INDEX bills_tenant;
DROP INDEX tenants_property_history;
DROP INDEX tenants_room_history;
