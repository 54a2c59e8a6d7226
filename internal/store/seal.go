package store

import (
	"context"
	"fmt"
	"strings"

	"rentapi/internal/rental"
	"rentapi/internal/secret"
)

// Some rows keep a copy of an object as a landlord's application reads it:
// an event's data, a webhook delivery's body (the event as sent), a chat
// notice. A payment's payment_url and a bill notice's link are copies of a
// payment link's URL, whose token opens the tenant's payment page, and the
// token is never stored in clear (see sealLinkURL). So a row of these
// columns whose text holds a link's URL is stored sealed under the server
// secret, bound to its column and row: a copy of the database opens no
// payment page, and a sealed text moved to another row does not open.
// Readers open the row again, so every answer, and every delivery's signed
// bytes, are the very text that was copied.
//
// A text holds a link's URL when it names the links' path (rental.PayPath): every
// URL of a link is made with it, and encoding/json writes it as it is. The
// rows without it (most events: properties, rooms, readings, bills) are
// stored as before, in clear JSON: they cost nothing more to read, and stay
// readable to an operator.

// sealedCopy names a column of copies; its rows are sealed under the name.
type sealedCopy string

// The columns of copies.
const (
	eventData    sealedCopy = "events.data"
	deliveryBody sealedCopy = "webhook_deliveries.body"
	noticeText   sealedCopy = "notifications.notice"
)

// sealedMark begins every sealed copy. A copy in clear is a JSON object.
const sealedMark = "sealed.v1."

// context binds a sealed copy to its column and row.
func (c sealedCopy) context(id string) []byte {
	return []byte("stored copy\x00" + string(c) + "\x00" + id)
}

// holdsLink reports whether a copy's text may hold a payment link's URL. A
// text that merely mentions the path (a landlord's description, say) is
// sealed too, which costs it nothing but the sealing.
func holdsLink(text string) bool { return strings.Contains(text, rental.PayPath) }

// sealCopy is the stored form of the copy text of column c in row id:
// sealed when it holds a link's URL. A process without the server secret
// (a benchmark's seeder) stores every text as it is: it cannot open a
// payment link's URL, so it has none to copy.
func (q *Queries) sealCopy(c sealedCopy, id, text string) string {
	if q.sec == nil || !holdsLink(text) {
		return text
	}
	return c.seal(q.sec, id, text)
}

// seal is the sealed form of the copy text of row id.
func (c sealedCopy) seal(sec *secret.Secret, id, text string) string {
	return sealedMark + sec.Seal([]byte(text), c.context(id))
}

// openCopy is the copy text that sealCopy stored, as bytes: what most
// readers want, without one more copy of the text.
func (q *Queries) openCopy(c sealedCopy, id, stored string) ([]byte, error) {
	sealed, ok := strings.CutPrefix(stored, sealedMark)
	switch {
	case !ok:
		return []byte(stored), nil
	case q.sec == nil:
		return nil, fmt.Errorf("store: %s of %s is sealed and this process has no server secret", c, id)
	}
	b, err := q.sec.Open(sealed, c.context(id))
	if err != nil {
		return nil, fmt.Errorf("store: %s of %s: %w", c, id, err)
	}
	return b, nil
}

// clearCopies are the statements that find and seal the copies of each
// column that hold a link's URL in clear, a batch at a time. Their LIKE is
// holdsLink's test (with rental.PayPath written out), and a partial index of just
// those rows (migration 00020) makes each start find them at once: none,
// once they are sealed, as a sealed text holds no "/".
var clearCopies = []struct {
	column        sealedCopy
	find, replace string
}{
	{eventData, `SELECT id, data FROM events WHERE data LIKE '%/pay/%' LIMIT 500`,
		`UPDATE events SET data = $2 WHERE id = $1 AND data LIKE '%/pay/%'`},
	{deliveryBody, `SELECT id, body FROM webhook_deliveries WHERE body LIKE '%/pay/%' LIMIT 500`,
		`UPDATE webhook_deliveries SET body = $2 WHERE id = $1 AND body LIKE '%/pay/%'`},
	{noticeText, `SELECT id, notice FROM notifications WHERE notice LIKE '%/pay/%' LIMIT 500`,
		`UPDATE notifications SET notice = $2 WHERE id = $1 AND notice LIKE '%/pay/%'`},
}

// sealClearCopies seals the copies of links' URLs stored in clear before
// copies were sealed, or by a process without the server secret: it runs
// after the migrations when the process has the secret, as sealClearLinks
// does, one transaction a batch. Every row found is sealed, also one that
// SQLite's LIKE (blind to case) found and holdsLink would not, so that each
// leaves the index and the loop ends.
func (db *DB) sealClearCopies(ctx context.Context) error {
	if db.sec == nil {
		return nil
	}
	for _, c := range clearCopies {
		for {
			type clearRow struct{ id, text string }
			var batch []clearRow
			rows, err := db.WritePool().QueryContext(ctx, c.find)
			if err != nil {
				return fmt.Errorf("store: seal %s: %w", c.column, err)
			}
			for rows.Next() {
				var r clearRow
				if err := rows.Scan(&r.id, &r.text); err != nil {
					rows.Close()
					return fmt.Errorf("store: seal %s: %w", c.column, err)
				}
				batch = append(batch, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("store: seal %s: %w", c.column, err)
			}
			if len(batch) == 0 {
				break
			}
			err = db.InTx(ctx, func(tx *Tx) error {
				for _, r := range batch {
					if _, err := tx.c.ExecContext(ctx, c.replace, r.id, c.column.seal(db.sec, r.id, r.text)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("store: seal %s: %w", c.column, err)
			}
		}
	}
	return nil
}
