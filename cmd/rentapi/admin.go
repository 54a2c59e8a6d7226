package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

// adminTool is one operator tool: its flags are defined on fs, and the
// returned function runs it once they are parsed and the database is open.
type adminTool struct {
	name, summary string
	setup         func(ctx context.Context, e environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error)
}

// adminTools are every tool of `rentapi admin`, in the order the help lists
// them.
var adminTools = []adminTool{
	{"create-app", "create an application; prints its ID", setupCreateApp},
	{"create-key", "create an API key; prints the key (shown once)", setupCreateKey},
	{"create-landlord", "create a real landlord; prints its ID", setupCreateLandlord},
	{"set-promptpay", "set the PromptPay receiver a landlord's QRs pay into", setupSetPromptPay},
	{"link-account", "link a landlord to an application; prints the account ID", setupLinkAccount},
}

// adminUsage lists the tools.
func adminUsage() string {
	var b strings.Builder
	b.WriteString("usage: rentapi admin <tool> [flags]\n\nEach tool prints only its result on stdout, for scripts.\n\ntools:\n")
	for _, t := range adminTools {
		fmt.Fprintf(&b, "  %-16s %s\n", t.name, t.summary)
	}
	b.WriteString("\nRun 'rentapi admin <tool> --help' for its flags.")
	return b.String()
}

// admin runs an operator tool. Each prints only its result on stdout (an ID
// or a key), because scripts and tests read it.
func (e environment) admin(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, adminUsage())
		return errors.New("admin: name a tool")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(e.stdout, adminUsage())
		return nil
	}
	i := slices.IndexFunc(adminTools, func(t adminTool) bool { return t.name == args[0] })
	if i < 0 {
		fmt.Fprintln(e.stderr, adminUsage())
		return fmt.Errorf("admin: unknown tool %q", args[0])
	}
	fs := flag.NewFlagSet("admin "+args[0], flag.ContinueOnError)
	dbf := e.dbFlags(fs)
	tool := adminTools[i].setup(ctx, e, fs)
	if err := e.parse(fs, args[1:], adminTools[i].summary); err != nil {
		return err
	}
	sec, db, err := e.openData(ctx, dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	out, err := tool(db, sec)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, out)
	return nil
}

func setupCreateApp(ctx context.Context, e environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	name := fs.String("name", "Application", "application name")
	company := fs.String("company", "", "company shown on the consent page")
	scopes := fs.String("scopes", "all", "scopes the application asks landlords for: s1,s2 or all")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		sc, err := rental.ParseScopes(*scopes)
		if err != nil {
			return "", err
		}
		devID, err := e.demoDeveloper(ctx, db)
		if err != nil {
			return "", err
		}
		var app *rental.Application
		err = db.InTx(ctx, func(tx *store.Tx) error {
			app, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: devID, Name: *name, Company: *company, Scopes: sc})
			return err
		})
		if err != nil {
			return "", err
		}
		return app.ID, nil
	}
}

func setupCreateKey(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	mode := fs.String("mode", "test", "test or live")
	appID := fs.String("app", "", "application ID (default: the demo application)")
	scopes := fs.String("scopes", "all", "scopes of the key: s1,s2 or all (of the application's)")
	name := fs.String("name", "Key", "key name")
	account := fs.String("account", "", "bind a live key to this account (acct_...)")
	expires := fs.Duration("expires-in", 0, "the key expires after this long (default: never)")
	return func(db *store.DB, sec *secret.Secret) (string, error) {
		return createKey(ctx, db, sec, *appID, rental.Mode(*mode), *scopes, *name, *account, *expires)
	}
}

func setupCreateLandlord(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	name := fs.String("name", "Landlord", "landlord name")
	plan := fs.String("plan", "standard", "landlord plan: free, standard or pro")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		var id string
		err := db.InTx(ctx, func(tx *store.Tx) (err error) {
			id, err = tx.CreateLandlord(ctx, *name, rental.LandlordPlan(*plan))
			return err
		})
		return id, err
	}
}

func setupSetPromptPay(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	landlord := fs.String("landlord", "", "landlord ID (ll_...)")
	kind := fs.String("kind", promptpay.Mobile, "receiver: mobile, national_id, tax_id, ewallet or biller")
	id := fs.String("id", "", "the mobile number, national or tax ID, e-wallet ID or 15-digit biller ID")
	ref2 := fs.String("ref2", "", "biller only: Ref2 on every QR (Ref1 is each payment's reference)")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		var r promptpay.Receiver
		err := db.InTx(ctx, func(tx *store.Tx) (err error) {
			r, err = tx.SetPromptPay(ctx, *landlord, promptpay.Receiver{Kind: *kind, ID: *id, Ref2: *ref2})
			return err
		})
		return r.Kind + " " + r.ID, err
	}
}

func setupLinkAccount(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	appID := fs.String("app", "", "application ID (default: the demo application)")
	landlord := fs.String("landlord", "", "landlord ID (ll_...)")
	scopes := fs.String("scopes", "all", "scopes the landlord grants: s1,s2 or all")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		sc, err := rental.ParseScopes(*scopes)
		if err != nil {
			return "", err
		}
		app, err := appOrDemo(ctx, db, *appID)
		if err != nil {
			return "", err
		}
		var acct *rental.Account
		err = db.InTx(ctx, func(tx *store.Tx) error {
			acct, err = tx.LinkAccount(ctx, app, *landlord, sc)
			return err
		})
		if err != nil {
			return "", err
		}
		return acct.ID, nil
	}
}

// appOrDemo returns appID, or the demo application's ID when it is empty.
func appOrDemo(ctx context.Context, db *store.DB, appID string) (string, error) {
	if appID != "" {
		return appID, nil
	}
	id, err := db.Read().DemoApplication(ctx)
	if rental.IsNotFound(err) {
		return "", errors.New("no demo application in this database: run `rentapi serve` once, or pass --app")
	}
	return id, err
}

// demoDeveloper returns the developer that owns the demo application,
// creating the demo developer and application on a new database.
func (e environment) demoDeveloper(ctx context.Context, db *store.DB) (string, error) {
	appID, err := appOrDemo(ctx, db, "")
	if err != nil {
		if _, _, err := bootstrap(ctx, db); err != nil {
			return "", err
		}
		if appID, err = appOrDemo(ctx, db, ""); err != nil {
			return "", err
		}
	}
	app, err := db.Read().GetApplication(ctx, appID)
	if err != nil {
		return "", err
	}
	return app.DeveloperID, nil
}

// createKey makes a key and returns its text, the only time it exists
// outside the caller's hands.
func createKey(ctx context.Context, db *store.DB, sec *secret.Secret, appID string, mode rental.Mode, scopes, name, account string, expiresIn time.Duration) (string, error) {
	app, err := appOrDemo(ctx, db, appID)
	if err != nil {
		return "", err
	}
	sc, err := rental.ParseScopes(scopes)
	if err != nil {
		return "", err
	}
	if scopes == "all" {
		a, err := db.Read().GetApplication(ctx, app)
		if err != nil {
			return "", err
		}
		sc = a.Scopes
	}
	text := rental.NewAPIKeySecret(mode)
	nk := store.NewKey{ApplicationID: app, Name: name, Mode: mode, Scopes: sc, AccountID: account,
		Fingerprint: sec.Fingerprint(text), Prefix: rental.KeyVisiblePrefix(text), Last4: rental.KeyLast4(text)}
	if expiresIn > 0 {
		t := db.Now().Add(expiresIn)
		nk.ExpiresAt = &t
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateAPIKey(ctx, nk)
		return err
	})
	if err != nil {
		return "", err
	}
	return text, nil
}
