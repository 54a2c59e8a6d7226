package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

const linkColumns = `l.id, l.bill_id, l.url, l.url_sealed, l.active, b.total - b.amount_paid, l.created_at, l.updated_at`

func (q *Queries) scanLink(sc interface{ Scan(...any) error }, l *rental.PaymentLink) error {
	*l = rental.PaymentLink{Object: "payment_link", Currency: rental.Currency}
	var created, updated int64
	var clear, sealed sql.NullString
	if err := sc.Scan(&l.ID, &l.BillID, &clear, &sealed, &l.Active, &l.Amount, &created, &updated); err != nil {
		return err
	}
	l.CreatedAt, l.UpdatedAt = rental.UnixMilli(created), rental.UnixMilli(updated)
	url, err := q.linkURL(l.ID, clear, sealed)
	l.URL = url
	return err
}

// Payment links' tokens are never stored in clear: a link is found by the
// SHA-256 of the token in its URL (token_hash), and its URL, which the
// landlord's application reads back (the link, its payments, their events,
// bill notices), is kept sealed under the server secret, bound to the
// link's ID (url_sealed), as stored idempotent responses are.

// linkTokenHash is what is stored to find a link by its URL's token.
func linkTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// linkContext binds a link's sealed URL to the link.
func linkContext(linkID string) []byte { return []byte("payment link url\x00" + linkID) }

// sealLinkURL is the stored form of a link's URL.
func (q *Queries) sealLinkURL(linkID, url string) (string, error) {
	if q.sec == nil {
		return "", errors.New("store: payment links need the server secret (store.Options.Secret)")
	}
	return q.sec.Seal([]byte(url), linkContext(linkID)), nil
}

// linkURL opens a link's URL: sealed, or in clear for a link stored before
// links were sealed and not sealed since (no process with the secret has
// migrated the database).
func (q *Queries) linkURL(linkID string, clear, sealed sql.NullString) (string, error) {
	switch {
	case sealed.Valid && q.sec != nil:
		b, err := q.sec.Open(sealed.String, linkContext(linkID))
		if err != nil {
			return "", fmt.Errorf("store: payment link %s: %w", linkID, err)
		}
		return string(b), nil
	case sealed.Valid:
		return "", fmt.Errorf("store: payment link %s: its URL is sealed and this process has no server secret", linkID)
	}
	return clear.String, nil
}

// sealClearLinks seals the payment links stored in clear before links were
// sealed (migration 00013 keeps their token and url until then): token_hash
// and url_sealed are set, token and url cleared. It runs after the
// migrations when the process has the server secret, and touches only the
// links left in clear.
func (db *DB) sealClearLinks(ctx context.Context) error {
	if db.sec == nil {
		return nil
	}
	rows, err := db.WritePool().QueryContext(ctx, `SELECT id, token, url FROM payment_links WHERE token IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("store: seal payment links: %w", err)
	}
	type clearLink struct{ id, token, url string }
	var links []clearLink
	for rows.Next() {
		var l clearLink
		if err := rows.Scan(&l.id, &l.token, &l.url); err != nil {
			rows.Close()
			return fmt.Errorf("store: seal payment links: %w", err)
		}
		links = append(links, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: seal payment links: %w", err)
	}
	q := db.Read()
	for _, l := range links {
		sealed, err := q.sealLinkURL(l.id, l.url)
		if err != nil {
			return err
		}
		if _, err := db.WritePool().ExecContext(ctx, `UPDATE payment_links SET token_hash = $2, url_sealed = $3, token = NULL, url = NULL
			WHERE id = $1 AND token IS NOT NULL`, l.id, linkTokenHash(l.token), sealed); err != nil {
			return fmt.Errorf("store: seal payment links: %w", err)
		}
	}
	return nil
}

// CreatePaymentLink returns the bill's active payment link, making one
// (created true) when it has none at page, a new page the caller made
// (rental.NewPaymentPage). A draft or paid bill, a landlord without QR
// payments, or one without a PromptPay receiver is 409 bill_not_payable.
func (tx *Tx) CreatePaymentLink(ctx context.Context, acct *rental.Account, billID string, page rental.PaymentPage) (*rental.PaymentLink, bool, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, false, err
	}
	b, err := tx.GetBill(ctx, acct, billID)
	if err != nil {
		return nil, false, err
	}
	payee, err := tx.payee(ctx, acct.LandlordID)
	if err != nil {
		return nil, false, err
	}
	if err := payee.CheckLink(b); err != nil {
		return nil, false, err
	}
	const active = `SELECT ` + linkColumns + ` FROM payment_links l JOIN bills b ON b.id = l.bill_id
		WHERE l.landlord_id = $1 AND l.bill_id = $2 AND l.active`
	var l rental.PaymentLink
	err = tx.scanLink(tx.c.QueryRowContext(ctx, active, acct.LandlordID, b.ID), &l)
	if err == nil {
		return &l, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("store: payment link: %w", err)
	}
	id := rental.NewID(rental.PrefixPaymentLink)
	sealed, err := tx.sealLinkURL(id, page.URL)
	if err != nil {
		return nil, false, err
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO payment_links (id, landlord_id, bill_id, token_hash, url_sealed, active, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, TRUE, $6, $6)`, id, acct.LandlordID, b.ID, linkTokenHash(page.Token), sealed, ms(tx.Now))
	if err != nil {
		return nil, false, fmt.Errorf("store: create payment link: %w", err)
	}
	err = tx.scanLink(tx.c.QueryRowContext(ctx, active, acct.LandlordID, b.ID), &l)
	if err != nil {
		return nil, false, fmt.Errorf("store: payment link: %w", err)
	}
	return &l, true, nil
}

// linkRows reads the landlord's payment links as linkColumns shows them, as
// a table whose columns a page's conditions can name unqualified (id,
// bill_id, active, created_at...): the bill joined for the amount would
// make those ambiguous.
const linkRows = `SELECT * FROM (SELECT ` + linkColumns + ` FROM payment_links l JOIN bills b ON b.id = l.bill_id
	WHERE l.landlord_id = $1) pl WHERE TRUE`

// scanLinkRow is scanLink for one and list. A link read back may be one
// whose bill was paid more than its total: it owes nothing, not less.
func (q *Queries) scanLinkRow(sc *scanner, l *rental.PaymentLink) error {
	err := q.scanLink(sc, l)
	l.Amount = max(l.Amount, 0)
	return err
}

// GetPaymentLink returns a payment link of the account's landlord, active or
// not, as CreatePaymentLink returned it.
func (q *Queries) GetPaymentLink(ctx context.Context, acct *rental.Account, id string) (*rental.PaymentLink, error) {
	return one(ctx, q, "payment_link", id, linkRows+` AND id = $2`, []any{acct.LandlordID, id}, q.scanLinkRow)
}

// PaymentLinkFilter narrows a payment link list: one bill's links, and only
// the active (or only the inactive) ones when Active is set.
type PaymentLinkFilter struct {
	BillID string
	Active *bool
}

// ListPaymentLinks returns a page of the account's payment links.
func (q *Queries) ListPaymentLinks(ctx context.Context, acct *rental.Account, f PaymentLinkFilter, p Page) ([]rental.PaymentLink, bool, error) {
	w := &where{sql: linkRows, args: []any{acct.LandlordID}}
	w.and("bill_id = ?", f.BillID)
	if f.Active != nil {
		w.and("active = ?", *f.Active)
	}
	return list(ctx, q, w.sql, w.args, p, q.scanLinkRow)
}

// PaymentLinkExists is nil when token is a payment link's, else not found.
// It changes nothing: a HEAD request or a crawler's probe opens no payment.
func (q *Queries) PaymentLinkExists(ctx context.Context, token string) error {
	var id string
	err := q.c.QueryRowContext(ctx, `SELECT id FROM payment_links WHERE token_hash = $1`, linkTokenHash(token)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return rental.NotFound("payment_link", "")
	}
	if err != nil {
		return fmt.Errorf("store: payment link: %w", err)
	}
	return nil
}
