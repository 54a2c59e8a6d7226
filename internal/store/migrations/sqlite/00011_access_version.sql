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
-- +goose StatementBegin
CREATE TRIGGER api_keys_access_update AFTER UPDATE ON api_keys
    WHEN OLD.id IS NOT NEW.id
      OR OLD.application_id IS NOT NEW.application_id
      OR OLD.name IS NOT NEW.name
      OR OLD.mode IS NOT NEW.mode
      OR OLD.prefix IS NOT NEW.prefix
      OR OLD.last4 IS NOT NEW.last4
      OR OLD.scopes IS NOT NEW.scopes
      OR OLD.account_id IS NOT NEW.account_id
      OR OLD.expires_at IS NOT NEW.expires_at
      OR OLD.revoked_at IS NOT NEW.revoked_at
      OR OLD.rotated_from IS NOT NEW.rotated_from
      OR OLD.created_at IS NOT NEW.created_at
      OR OLD.fingerprint IS NOT NEW.fingerprint
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_keys_access_delete AFTER DELETE ON api_keys
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER applications_access_update AFTER UPDATE ON applications
    WHEN OLD.id IS NOT NEW.id
      OR OLD.developer_id IS NOT NEW.developer_id
      OR OLD.name IS NOT NEW.name
      OR OLD.disabled IS NOT NEW.disabled
      OR OLD.scopes IS NOT NEW.scopes
      OR OLD.sandbox_account_id IS NOT NEW.sandbox_account_id
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER applications_access_delete AFTER DELETE ON applications
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER developers_access_update AFTER UPDATE ON developers
    WHEN OLD.id IS NOT NEW.id
      OR OLD.plan IS NOT NEW.plan
      OR OLD.pending_plan IS NOT NEW.pending_plan
      OR OLD.pending_from IS NOT NEW.pending_from
      OR OLD.suspended IS NOT NEW.suspended
      OR OLD.invoice_overdue IS NOT NEW.invoice_overdue
      OR OLD.created_at IS NOT NEW.created_at
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER developers_access_delete AFTER DELETE ON developers
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER invoices_access_update AFTER UPDATE ON invoices
    WHEN OLD.id IS NOT NEW.id
      OR OLD.developer_id IS NOT NEW.developer_id
      OR OLD.status IS NOT NEW.status
      OR OLD.due_at IS NOT NEW.due_at
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER invoices_access_insert AFTER INSERT ON invoices
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER invoices_access_delete AFTER DELETE ON invoices
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER accounts_access_update AFTER UPDATE ON accounts
    WHEN OLD.id IS NOT NEW.id
      OR OLD.application_id IS NOT NEW.application_id
      OR OLD.landlord_id IS NOT NEW.landlord_id
      OR OLD.sandbox IS NOT NEW.sandbox
      OR OLD.revoked_at IS NOT NEW.revoked_at
      OR OLD.scopes IS NOT NEW.scopes
      OR OLD.created_at IS NOT NEW.created_at
      OR OLD.updated_at IS NOT NEW.updated_at
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER accounts_access_insert AFTER INSERT ON accounts
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER accounts_access_delete AFTER DELETE ON accounts
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER landlords_access_update AFTER UPDATE ON landlords
    WHEN OLD.id IS NOT NEW.id
      OR OLD.name IS NOT NEW.name
      OR OLD.plan IS NOT NEW.plan
      OR OLD.qr_payments IS NOT NEW.qr_payments
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER landlords_access_delete AFTER DELETE ON landlords
BEGIN
    UPDATE access_version SET version = version + 1;
END;
-- +goose StatementEnd
-- engine-specific: end

-- +goose Down
-- engine-specific: begin
DROP TRIGGER api_keys_access_update;
DROP TRIGGER api_keys_access_delete;
DROP TRIGGER applications_access_update;
DROP TRIGGER applications_access_delete;
DROP TRIGGER developers_access_update;
DROP TRIGGER developers_access_delete;
DROP TRIGGER invoices_access_update;
DROP TRIGGER invoices_access_insert;
DROP TRIGGER invoices_access_delete;
DROP TRIGGER accounts_access_update;
DROP TRIGGER accounts_access_insert;
DROP TRIGGER accounts_access_delete;
DROP TRIGGER landlords_access_update;
DROP TRIGGER landlords_access_delete;
-- engine-specific: end
DROP TABLE access_version;
