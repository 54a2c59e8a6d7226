-- +goose Up
-- Payment links are listed per landlord in creation order (GET
-- /v1/payment-links), read by this index as every other list is.
CREATE INDEX payment_links_page ON payment_links (landlord_id, created_at, id);

-- +goose Down
DROP INDEX payment_links_page;
