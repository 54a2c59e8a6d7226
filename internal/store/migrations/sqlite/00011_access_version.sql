-- +goose Up
-- One number that every change to what a key lookup reads (keys,
-- applications, developers, their invoices, accounts, and the landlords'
-- plans) counts up, in the change's own transaction (store.Tx.accessChanged).
-- A process keeps each key's last lookup with the number it read, and
-- reads only this number while it is unchanged: a revoked key or an ended
-- link is still refused at the next request, on every process.
CREATE TABLE access_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO access_version (id, version) VALUES (1, 0);

-- +goose Down
DROP TABLE access_version;
