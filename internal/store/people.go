package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// SignUp makes a person of the kind with their own developer account (on
// the free plan) or landlord account (on the free landlord plan), holding
// the password's hash. An email already signed up is 409 email_taken.
func (tx *Tx) SignUp(ctx context.Context, kind rental.PersonKind, email, name, passwordHash string) (*rental.Person, error) {
	p := &rental.Person{ID: rental.NewID(rental.PrefixPerson), Kind: kind, Email: email, Name: name, CreatedAt: rental.Time{Time: tx.Now}}
	switch kind {
	case rental.PersonDeveloper:
		d, err := tx.CreateDeveloper(ctx, name, rental.PlanFree)
		if err != nil {
			return nil, err
		}
		p.DeveloperID = d.ID
	case rental.PersonLandlord:
		id, err := tx.CreateLandlord(ctx, name, rental.LandlordFree)
		if err != nil {
			return nil, err
		}
		p.LandlordID = id
	default:
		return nil, fmt.Errorf("store: sign up: unknown kind %q", kind)
	}
	_, err := tx.c.ExecContext(ctx, `INSERT INTO people (id, kind, email, name, password_hash, developer_id, landlord_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, p.ID, string(kind), email, name, passwordHash, nullString(p.DeveloperID), nullString(p.LandlordID), ms(tx.Now))
	if database.IsUniqueViolation(err) {
		return nil, rental.Conflict("email_taken", "An account with this email exists already; sign in instead.")
	}
	if err != nil {
		return nil, fmt.Errorf("store: sign up: %w", err)
	}
	return p, nil
}

const personColumns = `people.id, people.kind, people.email, people.name, COALESCE(people.developer_id, ''), COALESCE(people.landlord_id, ''), people.created_at`

func scanPerson(sc interface{ Scan(...any) error }, p *rental.Person, more ...any) error {
	*p = rental.Person{}
	var kind string
	var created int64
	err := sc.Scan(append([]any{&p.ID, &kind, &p.Email, &p.Name, &p.DeveloperID, &p.LandlordID, &created}, more...)...)
	p.Kind, p.CreatedAt = rental.PersonKind(kind), rental.UnixMilli(created)
	return err
}

// PersonByEmail returns the person of the kind with the (normalised) email
// and their password hash, for signing in.
func (q *Queries) PersonByEmail(ctx context.Context, kind rental.PersonKind, email string) (*rental.Person, string, error) {
	var hash string
	var p rental.Person
	err := scanPerson(q.c.QueryRowContext(ctx, `SELECT `+personColumns+`, password_hash FROM people WHERE kind = $1 AND email = $2`,
		string(kind), email), &p, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", rental.NotFound("person", email)
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: person: %w", err)
	}
	return &p, hash, nil
}

// PasswordHash returns a person's password hash, to check the current
// password before a change.
func (q *Queries) PasswordHash(ctx context.Context, personID string) (string, error) {
	var hash string
	err := q.c.QueryRowContext(ctx, `SELECT password_hash FROM people WHERE id = $1`, personID).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", rental.NotFound("person", personID)
	}
	if err != nil {
		return "", fmt.Errorf("store: password: %w", err)
	}
	return hash, nil
}

// SetPassword replaces a person's password hash and ends all their
// sessions: whoever knew the old password is signed out everywhere.
func (tx *Tx) SetPassword(ctx context.Context, personID, passwordHash string) error {
	if err := tx.execOne(ctx, "person", personID, `UPDATE people SET password_hash = $2, updated_at = $3 WHERE id = $1`,
		personID, passwordHash, ms(tx.Now)); err != nil {
		return err
	}
	return tx.EndSessions(ctx, personID)
}

// StartSession keeps a new session of the person under the hash of its
// token, valid until rental.SessionMax from now.
func (tx *Tx) StartSession(ctx context.Context, personID, tokenHash string) error {
	_, err := tx.c.ExecContext(ctx, `INSERT INTO sessions (token_hash, person_id, created_at, seen_at, expires_at) VALUES ($1, $2, $3, $3, $4)`,
		tokenHash, personID, ms(tx.Now), ms(tx.Now.Add(rental.SessionMax)))
	if err != nil {
		return fmt.Errorf("store: start session: %w", err)
	}
	return nil
}

// Session returns the person of a live session at now: one seen within
// rental.SessionIdle and before its absolute expiry. It notes the session
// as seen (at most once a minute, so reads rarely write). Anything else is
// not found.
func (db *DB) Session(ctx context.Context, tokenHash string, now time.Time) (*rental.Person, error) {
	var seen int64
	var p rental.Person
	err := scanPerson(db.Read().c.QueryRowContext(ctx, `SELECT `+personColumns+`, s.seen_at FROM sessions s JOIN people ON people.id = s.person_id
		WHERE s.token_hash = $1 AND s.expires_at > $2 AND s.seen_at > $3`, tokenHash, ms(now), ms(now.Add(-rental.SessionIdle))), &p, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("session", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: session: %w", err)
	}
	if ms(now)-seen > time.Minute.Milliseconds() {
		if _, err := db.WritePool().ExecContext(ctx, `UPDATE sessions SET seen_at = $2 WHERE token_hash = $1 AND seen_at < $2`, tokenHash, ms(now)); err != nil {
			return nil, fmt.Errorf("store: session seen: %w", err)
		}
	}
	return &p, nil
}

// EndSession ends one session (sign-out).
func (tx *Tx) EndSession(ctx context.Context, tokenHash string) error {
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("store: end session: %w", err)
	}
	return nil
}

// EndSessions ends every session of a person.
func (tx *Tx) EndSessions(ctx context.Context, personID string) error {
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM sessions WHERE person_id = $1`, personID); err != nil {
		return fmt.Errorf("store: end sessions: %w", err)
	}
	return nil
}

// PurgeSessions deletes what signing in leaves behind once it can no
// longer be used: sessions past their absolute expiry or idle time,
// consent forms past their validity, and portal links older than a day.
func (db *DB) PurgeSessions(ctx context.Context) (int64, error) {
	now := db.now()
	var total int64
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM sessions WHERE expires_at <= $1 OR seen_at <= $2`, []any{ms(now), ms(now.Add(-rental.SessionIdle))}},
		{`DELETE FROM consents WHERE expires_at <= $1`, []any{ms(now)}},
		{`DELETE FROM portal_links WHERE created_at <= $1`, []any{ms(now.Add(-24 * time.Hour))}},
	} {
		res, err := db.WritePool().ExecContext(ctx, q.sql, q.args...)
		if err != nil {
			return total, fmt.Errorf("store: purge sessions: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
