-- +goose Up
-- One number that every change to what a key lookup reads counts up, in
-- the change's own transaction: keys (but not their last use),
-- applications, developers and their invoices, accounts, and landlords'
-- names and plans (not their clocks). A process keeps each key's last lookup
-- with the number it read in the same statement, and while the number is
-- unchanged it reads only the number (store.DB.LookupKey): a revoked key or
-- an ended link is still refused at the next request, on every process.
-- Triggers count, so every writer counts: an older binary during a rolling
-- deploy, an operator's fix in psql, a later migration.
CREATE TABLE access_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO access_version (id, version) VALUES (1, 0);

-- engine-specific: begin
-- The count is taken at commit (deferred constraint triggers), after every
-- other lock of the transaction: no writer waits for another lock while
-- holding this row.
-- +goose StatementBegin
CREATE FUNCTION access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE access_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER api_keys_access_update AFTER UPDATE ON api_keys DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
      OR OLD.application_id IS DISTINCT FROM NEW.application_id
      OR OLD.name IS DISTINCT FROM NEW.name
      OR OLD.mode IS DISTINCT FROM NEW.mode
      OR OLD.prefix IS DISTINCT FROM NEW.prefix
      OR OLD.last4 IS DISTINCT FROM NEW.last4
      OR OLD.scopes IS DISTINCT FROM NEW.scopes
      OR OLD.account_id IS DISTINCT FROM NEW.account_id
      OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
      OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
      OR OLD.rotated_from IS DISTINCT FROM NEW.rotated_from
      OR OLD.created_at IS DISTINCT FROM NEW.created_at
      OR OLD.fingerprint IS DISTINCT FROM NEW.fingerprint)
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER api_keys_access_delete AFTER DELETE ON api_keys DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER applications_access_update AFTER UPDATE ON applications DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
      OR OLD.developer_id IS DISTINCT FROM NEW.developer_id
      OR OLD.name IS DISTINCT FROM NEW.name
      OR OLD.disabled IS DISTINCT FROM NEW.disabled
      OR OLD.scopes IS DISTINCT FROM NEW.scopes
      OR OLD.sandbox_account_id IS DISTINCT FROM NEW.sandbox_account_id)
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER applications_access_delete AFTER DELETE ON applications DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER developers_access_update AFTER UPDATE ON developers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
      OR OLD.plan IS DISTINCT FROM NEW.plan
      OR OLD.pending_plan IS DISTINCT FROM NEW.pending_plan
      OR OLD.pending_from IS DISTINCT FROM NEW.pending_from
      OR OLD.suspended IS DISTINCT FROM NEW.suspended
      OR OLD.invoice_overdue IS DISTINCT FROM NEW.invoice_overdue
      OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER developers_access_delete AFTER DELETE ON developers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER invoices_access_update AFTER UPDATE ON invoices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
      OR OLD.developer_id IS DISTINCT FROM NEW.developer_id
      OR OLD.status IS DISTINCT FROM NEW.status
      OR OLD.due_at IS DISTINCT FROM NEW.due_at)
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER invoices_access_insert_delete AFTER INSERT OR DELETE ON invoices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER accounts_access_update AFTER UPDATE ON accounts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
      OR OLD.application_id IS DISTINCT FROM NEW.application_id
      OR OLD.landlord_id IS DISTINCT FROM NEW.landlord_id
      OR OLD.sandbox IS DISTINCT FROM NEW.sandbox
      OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
      OR OLD.scopes IS DISTINCT FROM NEW.scopes
      OR OLD.created_at IS DISTINCT FROM NEW.created_at
      OR OLD.updated_at IS DISTINCT FROM NEW.updated_at)
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER accounts_access_insert_delete AFTER INSERT OR DELETE ON accounts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER landlords_access_update AFTER UPDATE ON landlords DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
      OR OLD.name IS DISTINCT FROM NEW.name
      OR OLD.plan IS DISTINCT FROM NEW.plan
      OR OLD.qr_payments IS DISTINCT FROM NEW.qr_payments)
    EXECUTE FUNCTION access_changed();
CREATE CONSTRAINT TRIGGER landlords_access_delete AFTER DELETE ON landlords DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION access_changed();
-- engine-specific: end

-- +goose Down
-- engine-specific: begin
DROP TRIGGER api_keys_access_update ON api_keys;
DROP TRIGGER api_keys_access_delete ON api_keys;
DROP TRIGGER applications_access_update ON applications;
DROP TRIGGER applications_access_delete ON applications;
DROP TRIGGER developers_access_update ON developers;
DROP TRIGGER developers_access_delete ON developers;
DROP TRIGGER invoices_access_update ON invoices;
DROP TRIGGER invoices_access_insert_delete ON invoices;
DROP TRIGGER accounts_access_update ON accounts;
DROP TRIGGER accounts_access_insert_delete ON accounts;
DROP TRIGGER landlords_access_update ON landlords;
DROP TRIGGER landlords_access_delete ON landlords;
DROP FUNCTION access_changed();
-- engine-specific: end
DROP TABLE access_version;
