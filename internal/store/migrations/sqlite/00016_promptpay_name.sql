-- +goose Up
-- The name of the PromptPay receiver's account holder, as the landlord
-- gives it beside the PromptPay number in /app. A tenant's bank app shows
-- the holder's name before the transfer is confirmed; the payment page
-- shows the same name, so the tenant can check both say the same. Not
-- part of the QR: the bank looks the name up itself. Receivers set before
-- this have none until the landlord saves the form again.
ALTER TABLE landlords ADD COLUMN promptpay_name TEXT;

-- +goose Down
ALTER TABLE landlords DROP COLUMN promptpay_name;
