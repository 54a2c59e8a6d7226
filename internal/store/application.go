package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

// metaDemoApplication names the application `admin create-key` uses when no
// --app is given: the one made for a new database by `serve`.
const metaDemoApplication = "demo_application"

// ApplicationSpec describes a new application.
type ApplicationSpec struct {
	DeveloperID  string
	Name         string
	Company      string
	Description  string
	Scopes       rental.Scopes
	RedirectURIs []string
}

// CreateApplication adds an application together with its sandbox: a sample
// landlord on the pro plan, the account linking it (granted every scope),
// and the sample data.
func (tx *Tx) CreateApplication(ctx context.Context, spec ApplicationSpec) (*rental.Application, error) {
	if err := rental.CheckRedirectURIs(spec.RedirectURIs); err != nil {
		return nil, err
	}
	uris, err := json.Marshal(append([]string{}, spec.RedirectURIs...))
	if err != nil {
		return nil, fmt.Errorf("store: create application: %w", err)
	}
	app := &rental.Application{
		ID: rental.NewID(rental.PrefixApplication), DeveloperID: spec.DeveloperID, Name: spec.Name, Company: spec.Company,
		Description: spec.Description, Scopes: spec.Scopes, RedirectURIs: spec.RedirectURIs, CreatedAt: rental.Time{Time: tx.Now},
	}
	app.SandboxAccountID = rental.NewID(rental.PrefixAccount)
	_, err = tx.c.ExecContext(ctx, `INSERT INTO applications (id, developer_id, name, company, description, scopes, redirect_uris, sandbox_account_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		app.ID, app.DeveloperID, app.Name, app.Company, app.Description, app.Scopes.String(), string(uris), app.SandboxAccountID, ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: create application: %w", err)
	}
	ll, err := tx.createLandlord(ctx, "Sandbox landlord of "+spec.Name, rental.LandlordPro, true, true)
	if err != nil {
		return nil, err
	}
	if err := tx.insertAccount(ctx, app.SandboxAccountID, app.ID, ll, true, rental.AllScopes); err != nil {
		return nil, err
	}
	sandbox, err := tx.GetAccount(ctx, app.ID, app.SandboxAccountID)
	if err != nil {
		return nil, err
	}
	return app, tx.seedSandbox(ctx, sandbox)
}

// SetApplicationDisabled turns all of an application's keys off or on.
func (tx *Tx) SetApplicationDisabled(ctx context.Context, id string, disabled bool) error {
	return tx.execOne(ctx, "application", id, `UPDATE applications SET disabled = $2 WHERE id = $1`, id, disabled)
}

// SetDemoApplication records the application made for a new database. It
// fails if one is recorded already (another process bootstrapped first).
func (tx *Tx) SetDemoApplication(ctx context.Context, appID string) error {
	_, err := tx.c.ExecContext(ctx, `INSERT INTO meta (name, value) VALUES ($1, $2)`, metaDemoApplication, appID)
	if err != nil {
		return fmt.Errorf("store: set demo application: %w", err)
	}
	return nil
}

// DemoApplication returns the ID of the application made for a new database.
func (q *Queries) DemoApplication(ctx context.Context) (string, error) {
	var id string
	err := q.c.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = $1`, metaDemoApplication).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", rental.NotFound("demo application", "")
	}
	if err != nil {
		return "", fmt.Errorf("store: demo application: %w", err)
	}
	return id, nil
}

// GetApplication returns one application.
func (q *Queries) GetApplication(ctx context.Context, id string) (*rental.Application, error) {
	var app rental.Application
	var scopes, uris string
	var created int64
	err := q.c.QueryRowContext(ctx, `SELECT id, developer_id, name, company, description, disabled, scopes, redirect_uris, sandbox_account_id, created_at
		FROM applications WHERE id = $1`, id).
		Scan(&app.ID, &app.DeveloperID, &app.Name, &app.Company, &app.Description, &app.Disabled, &scopes, &uris, &app.SandboxAccountID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("application", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get application: %w", err)
	}
	app.Scopes, _ = rental.ParseScopes(scopes)
	if err := json.Unmarshal([]byte(uris), &app.RedirectURIs); err != nil {
		return nil, fmt.Errorf("store: application %s redirect URIs: %w", id, err)
	}
	app.CreatedAt = rental.UnixMilli(created)
	return &app, nil
}
