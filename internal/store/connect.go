package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

// Consent is a consent page shown to a signed-in landlord: what the
// approval form, sent once from the same session, will do.
type Consent struct {
	ApplicationID string
	LandlordID    string
	RedirectURI   string
	State         string
	// Scopes are what the page showed the application requesting.
	Scopes rental.Scopes
	// Portal marks the portal's own flow: approval leaves a code for the
	// developer's session rather than a link.
	Portal bool
}

// ShowConsent keeps the consent page shown to a session (by the hash of
// its token), under the hash of the form's token, for
// rental.ConsentValidity.
func (tx *Tx) ShowConsent(ctx context.Context, tokenHash, sessionHash string, c Consent) error {
	_, err := tx.c.ExecContext(ctx, `INSERT INTO consents (token_hash, session_hash, application_id, landlord_id, redirect_uri, state, scopes, portal,
			created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tokenHash, sessionHash, c.ApplicationID, c.LandlordID, c.RedirectURI, c.State, c.Scopes.String(), c.Portal,
		ms(tx.Now), ms(tx.Now.Add(rental.ConsentValidity)))
	if err != nil {
		return fmt.Errorf("store: show consent: %w", err)
	}
	return nil
}

// TakeConsent uses up the consent form of the token hash, sent from the
// session of the session hash: once, before it expires, from the session
// that was shown it; anything else is not found. Exactly one of two
// concurrent takes succeeds.
func (tx *Tx) TakeConsent(ctx context.Context, tokenHash, sessionHash string) (*Consent, error) {
	var c Consent
	var scopes string
	err := tx.c.QueryRowContext(ctx, `UPDATE consents SET used_at = $3
		WHERE token_hash = $1 AND session_hash = $2 AND used_at IS NULL AND expires_at > $3
		RETURNING application_id, landlord_id, redirect_uri, state, scopes, portal`, tokenHash, sessionHash, ms(tx.Now)).
		Scan(&c.ApplicationID, &c.LandlordID, &c.RedirectURI, &c.State, &scopes, &c.Portal)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("consent", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: take consent: %w", err)
	}
	c.Scopes, _ = rental.ParseScopes(scopes)
	return &c, nil
}

// StartPortalLink records that a developer's session (by its token's hash)
// began linking an account to an application, under the hash of the state
// the browser carries in a cookie and through the consent page.
func (tx *Tx) StartPortalLink(ctx context.Context, stateHash, sessionHash, appID string) error {
	_, err := tx.c.ExecContext(ctx, `INSERT INTO portal_links (state_hash, session_hash, application_id, created_at) VALUES ($1, $2, $3, $4)`,
		stateHash, sessionHash, appID, ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: start portal link: %w", err)
	}
	return nil
}

// IssuePortalCode answers a landlord's approval in the portal's flow: the
// started link of the state (for that application, with no code yet)
// takes the landlord, the approved scopes and the hash of a single-use
// code valid rental.ConnectCodeValidity. An unknown state is not found.
func (tx *Tx) IssuePortalCode(ctx context.Context, stateHash, appID, landlordID string, scopes rental.Scopes, codeHash string) error {
	res, err := tx.c.ExecContext(ctx, `UPDATE portal_links SET code_hash = $3, landlord_id = $4, scopes = $5, code_expires_at = $6
		WHERE state_hash = $1 AND application_id = $2 AND code_hash IS NULL AND used_at IS NULL`,
		stateHash, appID, codeHash, landlordID, scopes.String(), ms(tx.Now.Add(rental.ConnectCodeValidity)))
	if err != nil {
		return fmt.Errorf("store: issue portal code: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return rental.NotFound("portal link", "")
	}
	return nil
}

// ExchangePortalCode uses up a portal code: it must be the code of the
// state, unexpired and unused, and presented by the developer's session
// that started the link. It links the landlord to the application with the
// approved scopes and returns the account. Anything else is not found and
// links nothing.
func (tx *Tx) ExchangePortalCode(ctx context.Context, codeHash, stateHash, sessionHash string) (*rental.Account, error) {
	var appID, landlordID, scopes string
	err := tx.c.QueryRowContext(ctx, `UPDATE portal_links SET used_at = $4
		WHERE code_hash = $1 AND state_hash = $2 AND session_hash = $3 AND used_at IS NULL AND code_expires_at > $4
		RETURNING application_id, landlord_id, scopes`, codeHash, stateHash, sessionHash, ms(tx.Now)).Scan(&appID, &landlordID, &scopes)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("portal code", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: exchange portal code: %w", err)
	}
	granted, _ := rental.ParseScopes(scopes)
	return tx.LinkAccount(ctx, appID, landlordID, granted)
}
