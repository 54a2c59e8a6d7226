package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"rentapi/internal/identity"
	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

// adminTool is one operator tool: its flags are defined on fs, and the
// returned function runs it once they are parsed and the database is open.
// details, when set, follows the summary in the tool's own help.
type adminTool struct {
	name, summary string
	setup         func(ctx context.Context, e environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error)
	details       string
}

// adminTools are every tool of `rentapi admin`, in the order the help lists
// them.
var adminTools = []adminTool{
	{"create-app", "create an application; prints its ID", setupCreateApp, ""},
	{"create-key", "create an API key; prints the key (shown once)", setupCreateKey, ""},
	{"create-landlord", "create a real landlord; prints its ID", setupCreateLandlord, ""},
	{"set-promptpay", "set the PromptPay receiver a landlord's QRs pay into", setupSetPromptPay, ""},
	{"link-account", "link a landlord to an application; prints the account ID", setupLinkAccount, ""},
	{"reset-password", "give a developer or landlord a new random password and end their sessions; prints it (shown once)", setupResetPassword, resetPasswordDetails},
	{"suspend-developer", "refuse every key of a developer's applications (403 developer_suspended)", setupDeveloperSuspension(true), ""},
	{"unsuspend-developer", "lift a developer's suspension", setupDeveloperSuspension(false), ""},
	{"disable-app", "refuse every key of an application (403 application_disabled)", setupAppDisabled(true), ""},
	{"enable-app", "accept an application's keys again", setupAppDisabled(false), ""},
	{"list-keys", "list an application's keys, newest first, one tab-separated line each", setupListKeys, listKeysDetails},
	{"revoke-key", "revoke an API key: refused (401) from its next request on", setupRevokeKey, ""},
	{"set-plan", "put a developer on a plan at once (Enterprise is set only here)", setupSetPlan, ""},
	{"invoice list", "list invoices [--developer dev_...] [--status open|paid|void]", setupInvoiceList, invoiceListDetails},
	{"invoice pay", "mark an open invoice paid: INV-YYYY-NNNNNN (live requests resume at the next one)", setupInvoiceSettle(true), ""},
	{"invoice void", "cancel an open invoice: INV-YYYY-NNNNNN", setupInvoiceSettle(false), ""},
	{"invoice close", "make every developer's invoice for a month that ended [--month YYYY-MM]", setupInvoiceClose, invoiceCloseDetails},
}

// adminUsage lists the tools.
func adminUsage() string {
	var b strings.Builder
	b.WriteString("usage: rentapi admin <tool> [flags]\n\nEach tool prints only its result on stdout, for scripts.\n\ntools:\n")
	for _, t := range adminTools {
		fmt.Fprintf(&b, "  %-20s %s\n", t.name, t.summary)
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
	// A tool of a group ("invoice pay") is named by two words; the one
	// argument that follows, if it is no flag (an invoice number), is its
	// --number.
	var positional string
	if len(args) > 1 && slices.ContainsFunc(adminTools, func(t adminTool) bool { return strings.HasPrefix(t.name, args[0]+" ") }) {
		args = append([]string{args[0] + " " + args[1]}, args[2:]...)
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			positional, args = args[1], append([]string{args[0]}, args[2:]...)
		}
	}
	i := slices.IndexFunc(adminTools, func(t adminTool) bool { return t.name == args[0] })
	if i < 0 {
		fmt.Fprintln(e.stderr, adminUsage())
		return fmt.Errorf("admin: unknown tool %q", args[0])
	}
	fs := e.flags("admin " + args[0])
	dbf := e.dbFlags(fs)
	tool := adminTools[i].setup(ctx, e, fs.set)
	if positional != "" {
		if fs.set.Lookup("number") != nil {
			args = append([]string{args[0], "--number", positional}, args[1:]...)
		} else {
			args = append(args, positional) // refused by parse: this tool takes none
		}
	}
	synopsis := adminTools[i].summary
	if d := adminTools[i].details; d != "" {
		synopsis += "\n\n" + d
	}
	if err := fs.parse(args[1:], synopsis); err != nil {
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
	if out != "" { // an empty list prints nothing, not an empty line
		fmt.Fprintln(e.stdout, out)
	}
	return nil
}

func setupCreateApp(ctx context.Context, e environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	name := fs.String("name", "Application", "application name")
	company := fs.String("company", "", "company shown on the consent page")
	scopes := fs.String("scopes", "all", "scopes the application asks landlords for: s1,s2 or all")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		if err := checkText("name", *name, 1); err != nil {
			return "", err
		}
		if err := checkText("company", *company, 0); err != nil {
			return "", err
		}
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
		if err := checkText("name", *name, 1); err != nil {
			return "", err
		}
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
	holder := fs.String("name", "", "the account holder's name, as the tenant's bank app shows it (the payment page shows it too)")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		var r promptpay.Receiver
		err := db.InTx(ctx, func(tx *store.Tx) (err error) {
			r, err = tx.SetPromptPay(ctx, *landlord, promptpay.Receiver{Kind: *kind, ID: *id, Ref2: *ref2}, *holder)
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

// checkID refuses a flag's value that is not an ID of the prefix, before
// anything is looked up: a typing mistake is told apart from an unknown ID.
func checkID(flagName, prefix, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("--%s is required (%s_…)", flagName, prefix)
	case !rental.ValidID(prefix, id):
		return fmt.Errorf("--%s %q is not an ID of the form %s_ and 24 lowercase letters or digits", flagName, id, prefix)
	}
	return nil
}

// checkText refuses a flag's text that the API and the pages would refuse
// too (rental.CheckText): a name given here is shown on the same pages and
// in the same lists as one given there.
func checkText(flagName, text string, minLen int) error {
	if err := rental.CheckText(flagName, text, minLen, rental.MaxNameLen); err != nil {
		return fmt.Errorf("--%s: %w", flagName, err)
	}
	return nil
}

// printable is a stored text as a terminal may show it: every character
// the text rule refuses (rental.Hidden: controls, escape sequences'
// introducers of C0 and C1, text-direction and other invisible format
// characters) and every byte that is not UTF-8 is written as a Go escape
// (\x1b, \u202e, \xff), and a backslash is doubled so that no escape
// can be faked. Text stored before the rule, or by another way in, cannot
// move the cursor, recolour or clear an operator's screen, or reorder
// list-keys' columns.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case rental.Hidden(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// resetPasswordDetails is reset-password's help beyond its summary.
const resetPasswordDetails = `v1 sends no email: give the person the printed password by a channel you
trust, and ask them to change it once signed in. Every session they had
ends, so whoever knew the old password is signed out everywhere.`

func setupResetPassword(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	kind := fs.String("kind", "", "developer or landlord")
	email := fs.String("email", "", "the email the person signed up with")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		k := rental.PersonKind(*kind)
		if k != rental.PersonDeveloper && k != rental.PersonLandlord {
			return "", fmt.Errorf("--kind must be developer or landlord, not %q", *kind)
		}
		addr, err := rental.NormalizeEmail(*email)
		if err != nil {
			return "", fmt.Errorf("--email: %w", err)
		}
		p, _, err := db.Read().PersonByEmail(ctx, k, addr)
		if rental.IsNotFound(err) {
			return "", fmt.Errorf("no %s has signed up with %s", k, addr)
		}
		if err != nil {
			return "", err
		}
		// 26 characters of base32 from crypto/rand: 130 bits, and easy to
		// read out to the person, who changes it after signing in.
		password := rand.Text()
		hash := identity.HashPassword(password)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetPassword(ctx, p.ID, hash) }); err != nil {
			return "", err
		}
		return password, nil
	}
}

// setupDeveloperSuspension makes suspend-developer (suspend true) and
// unsuspend-developer.
func setupDeveloperSuspension(suspend bool) func(context.Context, environment, *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	return func(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
		id := fs.String("developer", "", "developer ID (dev_...)")
		return func(db *store.DB, _ *secret.Secret) (string, error) {
			if err := checkID("developer", rental.PrefixDeveloper, *id); err != nil {
				return "", err
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperSuspended(ctx, *id, suspend) }); err != nil {
				return "", err
			}
			if suspend {
				return *id + " suspended", nil
			}
			return *id + " active", nil
		}
	}
}

// setupAppDisabled makes disable-app (disable true) and enable-app.
func setupAppDisabled(disable bool) func(context.Context, environment, *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	return func(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
		id := fs.String("app", "", "application ID (app_...)")
		return func(db *store.DB, _ *secret.Secret) (string, error) {
			if err := checkID("app", rental.PrefixApplication, *id); err != nil {
				return "", err
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, *id, disable) }); err != nil {
				return "", err
			}
			if disable {
				return *id + " disabled", nil
			}
			return *id + " enabled", nil
		}
	}
}

// listKeysDetails is list-keys' help beyond its summary: the columns.
const listKeysDetails = `Columns: ID, name, mode, the start of the key (only it and a fingerprint
are stored, so the rest cannot be shown), scopes (comma-separated),
bound account, expiry (or never), created, last used (or never), status
(active; expiring: within 24 hours, as every rotated key is; expired;
revoked). Times are UTC; an empty field is "-". A name shows control,
invisible and text-direction characters, and bytes that are not UTF-8, as
escapes (\x1b, \u202e, \xff), and a backslash as \\.`

func setupListKeys(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	appID := fs.String("app", "", "application ID (default: the demo application)")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		if *appID != "" {
			if err := checkID("app", rental.PrefixApplication, *appID); err != nil {
				return "", err
			}
		}
		app, err := appOrDemo(ctx, db, *appID)
		if err != nil {
			return "", err
		}
		if _, err := db.Read().GetApplication(ctx, app); err != nil {
			return "", err // an unknown application is an error, not an empty list
		}
		keys, err := db.Read().APIKeys(ctx, app)
		if err != nil {
			return "", err
		}
		lines := make([]string, len(keys))
		for i, k := range keys {
			lines[i] = keyLine(k, db.Now())
		}
		return strings.Join(lines, "\n"), nil
	}
}

// keyLine is one key as list-keys prints it, tab-separated: ID, name (as
// printable shows it), mode,
// the visible start of the key (only that and a fingerprint are stored),
// scopes, bound account, expiry, creation, last use, status at now. An
// empty field is "-".
func keyLine(k rental.APIKey, now time.Time) string {
	when := func(t *rental.Time, none string) string {
		if t == nil {
			return none
		}
		return t.UTC().Format(rental.TimeLayout)
	}
	scopes := strings.ReplaceAll(k.Scopes.String(), " ", ",")
	if scopes == "" {
		scopes = "-"
	}
	account := k.AccountID
	if account == "" {
		account = "-"
	}
	return strings.Join([]string{k.ID, printable(k.Name), string(k.Mode), k.Prefix + "…" + k.Last4, scopes, account,
		when(k.ExpiresAt, "never"), when(&k.CreatedAt, "-"), when(k.LastUsedAt, "never"), string(k.Status(now))}, "\t")
}

func setupRevokeKey(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	id := fs.String("key", "", "key ID (key_..., as list-keys shows it)")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		if err := checkID("key", rental.PrefixAPIKey, *id); err != nil {
			return "", err
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, *id) }); err != nil {
			return "", err
		}
		return *id + " revoked", nil
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
	// The portal's rule for a key's name, named by the flag.
	if err := rental.CheckKeyName(name); err != nil {
		return "", fmt.Errorf("--name: %w", err)
	}
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
	key := rental.MintKey(mode, sec.Fingerprint)
	text := key.Text
	nk := store.NewKey{ApplicationID: app, Name: name, Mode: mode, Scopes: sc, AccountID: account}.Minted(key)
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
