-- +goose Up
-- Late fees (issue 32). A property's rule and a bill's snapshot of it (the
-- rule in force when the bill was issued) are JSON objects {amount, per,
-- grace_days, max_amount}, NULL for none. A bill keeps what its late fee
-- has charged so far (late_fee_amount: what the sweep's conditional
-- UPDATE is keyed on, so each charge is made once) and the Thailand date
-- on which it next changes (late_fee_next, NULL when it never will: no
-- rule, paid, charged once or capped), so the sweep finds the bills whose
-- day has come by index, and only them.
ALTER TABLE properties ADD COLUMN late_fee TEXT;
ALTER TABLE bills ADD COLUMN late_fee TEXT;
ALTER TABLE bills ADD COLUMN late_fee_amount BIGINT NOT NULL DEFAULT 0;
ALTER TABLE bills ADD COLUMN late_fee_next TEXT;
-- Who has work today (the sweep's first query), and a landlord's bills
-- with work, in the order a batch takes them.
CREATE INDEX bills_late_fee_due ON bills (late_fee_next, landlord_id) WHERE late_fee_next IS NOT NULL;
CREATE INDEX bills_late_fee ON bills (landlord_id, late_fee_next, id) WHERE late_fee_next IS NOT NULL;

-- +goose Down
DROP INDEX bills_late_fee;
DROP INDEX bills_late_fee_due;
ALTER TABLE bills DROP COLUMN late_fee_next;
ALTER TABLE bills DROP COLUMN late_fee_amount;
ALTER TABLE bills DROP COLUMN late_fee;
ALTER TABLE properties DROP COLUMN late_fee;
