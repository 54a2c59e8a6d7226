-- +goose Up
-- Tenants' transfer slips, filed against a bill and verified by the
-- slip-verification provider in a job. The QR text a tenant app scanned is
-- kept here until the slip is settled; images are kept apart (slip_images)
-- so that the retention sweep deletes them after 30 days while the slip
-- stays as the landlord's record.
CREATE TABLE slips (
    id               TEXT PRIMARY KEY,
    landlord_id      TEXT NOT NULL REFERENCES landlords (id),
    bill_id          TEXT NOT NULL,
    payment_id       TEXT,
    status           TEXT NOT NULL,
    rejection_reason TEXT,
    amount           BIGINT,
    trans_ref        TEXT,
    sending_bank     TEXT,
    transferred_at   BIGINT,
    source           TEXT NOT NULL,
    qr_payload       TEXT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX slips_page ON slips (landlord_id, created_at, id);
CREATE INDEX slips_bill ON slips (bill_id);
-- One transfer pays once, across the whole service: the same slip sent
-- twice, even at the same moment from two processes, is verified once and
-- the other is rejected as duplicate_slip.
CREATE UNIQUE INDEX slips_verified_ref ON slips (trans_ref) WHERE status = 'verified';

-- A slip's image: personal data (names, account numbers), never served by
-- the API, deleted 30 days after it came in.
CREATE TABLE slip_images (
    slip_id      TEXT PRIMARY KEY,
    landlord_id  TEXT NOT NULL REFERENCES landlords (id),
    content_type TEXT NOT NULL,
    data         BYTEA NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX slip_images_age ON slip_images (created_at);

-- The slip a payment was recorded from (NULL for QR payments confirmed by
-- a provider).
ALTER TABLE payments ADD COLUMN slip_id TEXT;

-- +goose Down
ALTER TABLE payments DROP COLUMN slip_id;
DROP TABLE slip_images;
DROP TABLE slips;
