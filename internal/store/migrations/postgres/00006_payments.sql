-- +goose Up
-- A landlord's PromptPay receiver (JSON: kind, id, ref1, ref2); NULL until
-- the landlord sets one up, and no QR can be made without it.
ALTER TABLE landlords ADD COLUMN promptpay TEXT;

-- A bill's payment link: the token in its public URL is the only secret a
-- tenant needs. At most one link of a bill is active.
CREATE TABLE payment_links (
    id          TEXT PRIMARY KEY,
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    bill_id     TEXT NOT NULL,
    token       TEXT NOT NULL UNIQUE,
    url         TEXT NOT NULL,
    active      BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX payment_links_active ON payment_links (bill_id) WHERE active;
CREATE INDEX payment_links_landlord ON payment_links (landlord_id);

-- Every provider confirmation, once: the provider's transaction ID is the
-- key, so a confirmation repeated or replayed is recognised.
CREATE TABLE payment_confirmations (
    provider       TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    landlord_id    TEXT NOT NULL REFERENCES landlords (id),
    payment_id     TEXT NOT NULL,
    amount         BIGINT NOT NULL,
    paid_at        BIGINT NOT NULL,
    received_at    BIGINT NOT NULL,
    PRIMARY KEY (provider, transaction_id)
);

CREATE INDEX payments_pending ON payments (status, expires_at);

-- A reading shows the bill made from it: found by the reading's ID.
CREATE INDEX bills_reading ON bills (reading_id);
CREATE INDEX payments_link ON payments (payment_link_id);

-- +goose Down
DROP INDEX bills_reading;
DROP INDEX payments_link;
DROP INDEX payments_pending;
DROP TABLE payment_confirmations;
DROP TABLE payment_links;
ALTER TABLE landlords DROP COLUMN promptpay;
