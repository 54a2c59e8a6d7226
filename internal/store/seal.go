package store

import (
	"context"
	"fmt"
	"strings"
)

// Some rows keep a copy of an object as a landlord's application reads it:
// an event's data, a webhook delivery's body (the event as sent), a chat
// notice. A payment's payment_url and a bill notice's link are such copies
// of a payment link's URL, whose token opens the tenant's payment page, and
// the token is never stored in clear (see sealLinkURL). So every row of
// these columns is stored sealed under the server secret, bound to its
// column and row: a copy of the database opens no payment page, and a
// sealed text moved to another row does not open. Every row is sealed, not
// only those holding a link: the store cannot tell without reading the
// object, and sealing and opening cost microseconds a row (see the API's
// BenchmarkListEvents). Readers open the row again, so every answer, and
// every delivery's signed bytes, are the very text that was copied.

// sealedCopy names a column of copies; its rows are sealed under the name.
type sealedCopy string

// The columns of copies.
const (
	eventData    sealedCopy = "events.data"
	deliveryBody sealedCopy = "webhook_deliveries.body"
	noticeText   sealedCopy = "notifications.notice"
)

// sealedMark begins every sealed copy. A copy stored before copies were
// sealed is a JSON object, and reads as it is until the next start seals
// it (sealClearCopies).
const sealedMark = "sealed.v1."

// context binds a sealed copy to its column and row.
func (c sealedCopy) context(id string) []byte {
	return []byte("stored copy\x00" + string(c) + "\x00" + id)
}

// sealCopy is the stored form of the copy text of column c in row id. A
// process without the server secret (a benchmark's seeder) stores the text
// as it is: it cannot open a payment link's URL, so it has none to copy.
func (q *Queries) sealCopy(c sealedCopy, id, text string) string {
	if q.sec == nil {
		return text
	}
	return sealedMark + q.sec.Seal([]byte(text), c.context(id))
}

// openCopy is the copy text that sealCopy stored.
func (q *Queries) openCopy(c sealedCopy, id, stored string) (string, error) {
	sealed, ok := strings.CutPrefix(stored, sealedMark)
	switch {
	case !ok:
		return stored, nil
	case q.sec == nil:
		return "", fmt.Errorf("store: %s of %s is sealed and this process has no server secret", c, id)
	}
	b, err := q.sec.Open(sealed, c.context(id))
	if err != nil {
		return "", fmt.Errorf("store: %s of %s: %w", c, id, err)
	}
	return string(b), nil
}

// clearCopies are the statements that find and seal the copies of each
// column stored in clear, a batch at a time: each clear row begins with
// the "{" of its JSON, and a partial index (migration 00020) holds just
// those rows, so that once they are sealed each start finds none at once.
var clearCopies = []struct {
	column        sealedCopy
	find, replace string
}{
	{eventData, `SELECT id, data FROM events WHERE substr(data, 1, 1) = '{' LIMIT 500`,
		`UPDATE events SET data = $2 WHERE id = $1 AND substr(data, 1, 1) = '{'`},
	{deliveryBody, `SELECT id, body FROM webhook_deliveries WHERE substr(body, 1, 1) = '{' LIMIT 500`,
		`UPDATE webhook_deliveries SET body = $2 WHERE id = $1 AND substr(body, 1, 1) = '{'`},
	{noticeText, `SELECT id, notice FROM notifications WHERE substr(notice, 1, 1) = '{' LIMIT 500`,
		`UPDATE notifications SET notice = $2 WHERE id = $1 AND substr(notice, 1, 1) = '{'`},
}

// sealClearCopies seals the copies stored in clear before copies were
// sealed, or by a process without the server secret: it runs after the
// migrations when the process has the secret, as sealClearLinks does, one
// transaction a batch.
func (db *DB) sealClearCopies(ctx context.Context) error {
	if db.sec == nil {
		return nil
	}
	for _, c := range clearCopies {
		for {
			type clearRow struct{ id, text string }
			var batch []clearRow
			rows, err := db.write.QueryContext(ctx, c.find)
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
					if _, err := tx.c.ExecContext(ctx, c.replace, r.id, tx.sealCopy(c.column, r.id, r.text)); err != nil {
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
