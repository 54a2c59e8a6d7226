-- +goose Up
-- Receipts (issue 31). A bill that becomes paid gets its receipt in the
-- transaction that marks it paid: a number R<YYYY>-<NNNNNN> counted per
-- landlord and year (Bangkok's) in receipt_counters, whose row the same
-- transaction takes (an upsert: one writer at a time per landlord and
-- year, on every engine and across processes), so numbers are consecutive
-- and a rolled-back payment leaves no gap. The receipt's page is found by
-- the SHA-256 of the token in its URL (receipt_token_hash), as payment
-- links are; the URL itself is stored sealed under the server secret
-- (receipt_url, as copies of payment links' URLs are). The unique indexes
-- make a second number for a bill, or one number twice, impossible
-- whatever the code above them does.
ALTER TABLE bills ADD COLUMN receipt_number TEXT;
ALTER TABLE bills ADD COLUMN receipt_issued_at BIGINT;
ALTER TABLE bills ADD COLUMN receipt_token_hash TEXT;
ALTER TABLE bills ADD COLUMN receipt_url TEXT;
CREATE UNIQUE INDEX bills_receipt_number ON bills (landlord_id, receipt_number) WHERE receipt_number IS NOT NULL;
CREATE UNIQUE INDEX bills_receipt_token ON bills (receipt_token_hash) WHERE receipt_token_hash IS NOT NULL;
CREATE TABLE receipt_counters (
    landlord_id TEXT NOT NULL REFERENCES landlords (id),
    year        INTEGER NOT NULL,
    last_number BIGINT NOT NULL,
    PRIMARY KEY (landlord_id, year)
);

-- +goose Down
DROP TABLE receipt_counters;
DROP INDEX bills_receipt_token;
DROP INDEX bills_receipt_number;
ALTER TABLE bills DROP COLUMN receipt_url;
ALTER TABLE bills DROP COLUMN receipt_token_hash;
ALTER TABLE bills DROP COLUMN receipt_issued_at;
ALTER TABLE bills DROP COLUMN receipt_number;
