package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// TestLookupKeyAcrossProcesses: a process's kept key lookups (LookupKey)
// answer exactly what a fresh lookup would, whatever another process
// changed in between (plan, application, developer, link, key), and what
// the passing of time alone changes (a downgrade taking effect) too.
func TestLookupKeyAcrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		other, err := store.Open(ctx, e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, AddFriendURL: storetest.AddFriendURL})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		sec := storetest.Secret(t)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		key := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
		fp := sec.Fingerprint(key)
		// lookup is the second process's kept lookup, checked against a
		// fresh one.
		lookup := func(step string) *rental.KeyOwner {
			t.Helper()
			for range 2 { // the first may fill the cache; the second is served from it
				got, err := other.LookupKey(ctx, fp, "", e.Clock.Now())
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				want, err := e.DB.Read().KeyForRequest(ctx, fp, "", e.Clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: kept lookup\n%+v\nfresh lookup\n%+v", step, got, want)
				}
			}
			o, _ := other.LookupKey(ctx, fp, "", e.Clock.Now())
			return o
		}
		change := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := e.DB.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		o := lookup("start")
		// What the cache hands out is shared by the requests that take it,
		// and nothing may change it: in tests, the next use of a changed
		// lookup panics.
		for _, change := range []func(){func() { o.Key.Name = "changed" }, func() { o.Account.Granted[0] = "changed" }} {
			before := *o
			granted := slices.Clone(o.Account.Granted)
			account := *o.Account
			change()
			func() {
				defer func() {
					if recover() == nil {
						t.Error("a kept lookup changed by its caller was handed out again")
					}
				}()
				other.LookupKey(ctx, fp, "", e.Clock.Now())
			}()
			*o, *o.Account = before, account
			copy(o.Account.Granted, granted)
		}
		lookup("after the changes were undone")

		// The kept lookup is what answers: a change it does not count (a
		// key's last use, written behind the store's back) goes unseen.
		if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE api_keys SET last_used_at = 1 WHERE id = $1`, o.Key.ID); err != nil {
			t.Fatal(err)
		}
		if kept, err := other.LookupKey(ctx, fp, "", e.Clock.Now()); err != nil || kept.Key.LastUsedAt != nil {
			t.Fatalf("not served from the kept lookup: %+v %v", kept, err)
		}
		if err := other.NoteKeyUse(ctx, o.Key.ID, e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if o := lookup("key used"); o.Key.LastUsedAt == nil {
			t.Fatal("last use not seen")
		}
		change(func(tx *store.Tx) error { return tx.SetLandlordPlan(ctx, acct.LandlordID, rental.LandlordPro) })
		if o := lookup("landlord's plan"); o.Account.Plan != rental.LandlordPro {
			t.Fatalf("plan %s", o.Account.Plan)
		}
		// A downgrade waits for the next month; the lookup kept before it
		// takes effect must not outlive it.
		change(func(tx *store.Tx) error {
			_, err := tx.ChangeDeveloperPlan(ctx, f.Developer.ID, rental.PlanDeveloper)
			return err
		})
		if o := lookup("downgrade chosen"); o.Developer.Plan != rental.PlanPro {
			t.Fatalf("plan %s before the downgrade's month", o.Developer.Plan)
		}
		e.Clock.Advance(rental.MonthStart(e.Clock.Now()).AddDate(0, 1, 0).Sub(e.Clock.Now()) + time.Second)
		if o := lookup("downgrade's month"); o.Developer.Plan != rental.PlanDeveloper {
			t.Fatalf("plan %s after the downgrade took effect", o.Developer.Plan)
		}
		// So must one kept before an invoice falls due.
		var inv *rental.Invoice
		change(func(tx *store.Tx) error {
			inv, err = tx.CloseMonth(ctx, f.Developer.ID, rental.MonthOf(rental.MonthStart(tx.Now).Add(-time.Millisecond)))
			return err
		})
		if inv == nil {
			t.Fatal("no invoice for the month ended")
		}
		if lookup("invoice issued").Developer.InvoiceOverdue {
			t.Fatal("overdue before its due time")
		}
		e.Clock.Advance(inv.DueAt.Sub(e.Clock.Now()) + time.Second)
		if !lookup("invoice due").Developer.InvoiceOverdue {
			t.Fatal("not overdue after its due time")
		}
		change(func(tx *store.Tx) error { _, err := tx.PayInvoice(ctx, inv.Number); return err })
		if lookup("invoice paid").Developer.InvoiceOverdue {
			t.Fatal("overdue once paid")
		}
		change(func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, f.App.ID, true) })
		if !lookup("application disabled").App.Disabled {
			t.Fatal("disabled application not seen")
		}
		change(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, true, true) })
		if o := lookup("developer suspended"); !o.Developer.Suspended || !o.Developer.InvoiceOverdue {
			t.Fatal("suspension not seen")
		}
		change(func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) })
		if !lookup("link ended").Account.Revoked {
			t.Fatal("ended link not seen")
		}
		change(func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, o.Key.ID) })
		if lookup("key revoked").Key.RevokedAt == nil {
			t.Fatal("revoked key not seen")
		}
		if _, err := other.LookupKey(context.Background(), sec.Fingerprint(rental.NewAPIKeySecret(rental.ModeLive)), "", e.Clock.Now()); !rental.IsNotFound(err) {
			t.Fatalf("unknown key: %v", err)
		}
	})
}

// TestEveryLookedUpColumnCounts reads the key lookup's query for the
// columns it reads, and changes each behind the store's back, in SQL of its
// own: the access version must count every such change (migration 00011's
// triggers), and no change the lookup does not read (a key's last use, a
// landlord's clock, a plan set to itself).
func TestEveryLookedUpColumnCounts(t *testing.T) {
	t.Parallel()
	tables := map[string]string{"k": "api_keys", "ap": "applications", "d": "developers", "i": "invoices", "a": "accounts", "l": "landlords"}
	// How each column is changed; $1 is another row of the table the
	// column refers to, where it refers to one.
	changes := map[string]string{
		"api_keys.application_id": "application_id = $1", "api_keys.name": "name = name || 'x'", "api_keys.mode": "mode = mode || 'x'",
		"api_keys.prefix": "prefix = prefix || 'x'", "api_keys.last4": "last4 = last4 || 'x'", "api_keys.scopes": "scopes = scopes || 'x'",
		"api_keys.account_id": "account_id = NULL", "api_keys.expires_at": "expires_at = COALESCE(expires_at, 0) + 1",
		"api_keys.revoked_at": "revoked_at = COALESCE(revoked_at, 0) + 1", "api_keys.rotated_from": "rotated_from = COALESCE(rotated_from, '') || 'x'",
		"api_keys.created_at": "created_at = created_at + 1", "api_keys.fingerprint": "fingerprint = fingerprint || 'x'",
		"applications.developer_id": "developer_id = $1", "applications.name": "name = name || 'x'", "applications.disabled": "disabled = NOT disabled",
		"applications.scopes": "scopes = scopes || 'x'", "applications.sandbox_account_id": "sandbox_account_id = sandbox_account_id || 'x'",
		"developers.plan": "plan = plan || 'x'", "developers.pending_plan": "pending_plan = COALESCE(pending_plan, '') || 'x'",
		"developers.pending_from": "pending_from = COALESCE(pending_from, 0) + 1", "developers.suspended": "suspended = NOT suspended",
		"developers.invoice_overdue": "invoice_overdue = NOT invoice_overdue", "developers.created_at": "created_at = created_at + 1",
		"invoices.developer_id": "developer_id = $1", "invoices.status": "status = status || 'x'", "invoices.due_at": "due_at = due_at + 1",
		"accounts.application_id": "application_id = $1", "accounts.landlord_id": "landlord_id = $1", "accounts.sandbox": "sandbox = NOT sandbox",
		"accounts.revoked_at": "revoked_at = COALESCE(revoked_at, 0) + 1", "accounts.scopes": "scopes = scopes || 'x'",
		"accounts.created_at": "created_at = created_at + 1", "accounts.updated_at": "updated_at = updated_at + 1",
		"landlords.name": "name = name || 'x'", "landlords.plan": "plan = plan || 'x'", "landlords.qr_payments": "qr_payments = NOT qr_payments",
	}
	unread := map[string]string{
		"api_keys":     "last_used_at = COALESCE(last_used_at, 0) + 1",
		"landlords":    "clock = clock + 1",
		"developers":   "plan = plan",
		"applications": "company = company || 'x'",
	}
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		other := storetest.NewFixture(t, e.DB, rental.PlanPro)
		sec := storetest.Secret(t)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		third := storetest.NewFixture(t, e.DB, rental.PlanPro)
		thirdAcct := third.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes) // a landlord no other application has
		key := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
		o, err := e.DB.Read().KeyForRequest(ctx, sec.Fingerprint(key), "", e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(rental.MonthStart(e.Clock.Now()).AddDate(0, 1, 0).Sub(e.Clock.Now()) + time.Second)
		var inv *rental.Invoice
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			inv, err = tx.CloseMonth(ctx, f.Developer.ID, rental.MonthOf(rental.MonthStart(tx.Now).Add(-time.Millisecond)))
			return err
		}); err != nil || inv == nil {
			t.Fatalf("invoice: %v %v", inv, err)
		}
		rows := map[string]string{"api_keys": o.Key.ID, "applications": f.App.ID, "developers": f.Developer.ID, "invoices": inv.ID, "accounts": acct.ID, "landlords": acct.LandlordID}
		refs := map[string]string{"application_id": other.App.ID, "developer_id": other.Developer.ID, "landlord_id": thirdAcct.LandlordID}
		version := func() int64 {
			t.Helper()
			var v int64
			if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT version FROM access_version`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		update := func(table, set string, arg string) {
			t.Helper()
			args := []any{rows[table]}
			q := `UPDATE ` + table + ` SET ` + strings.ReplaceAll(set, "$1", "$2") + ` WHERE id = $1`
			if arg != "" {
				args = append(args, arg)
			}
			if _, err := e.DB.WritePool().ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		read := map[string]bool{}
		for _, m := range regexp.MustCompile(`\b([a-z]+)\.([a-z_]+)\b`).FindAllStringSubmatch(store.KeyForRequestSQL, -1) {
			table, ok := tables[m[1]]
			if !ok {
				t.Fatalf("the lookup reads %s.%s: which table is %s?", m[1], m[2], m[1])
			}
			// Primary keys are never changed; a key's last use is taken from
			// the process that wrote it (see LookupKey).
			if m[2] != "id" && m[1]+"."+m[2] != "k.last_used_at" {
				read[table+"."+m[2]] = true
			}
		}
		for col := range read {
			set, ok := changes[col]
			if !ok {
				t.Errorf("the lookup reads %s: count its changes in a trigger (migration 00011 or a later one) and say here how to change it", col)
				continue
			}
			table, column, _ := strings.Cut(col, ".")
			before := version()
			update(table, set, refs[column])
			if version() <= before {
				t.Errorf("a change of %s was not counted", col)
			}
		}
		for table, set := range unread {
			before := version()
			update(table, set, "")
			if version() != before {
				t.Errorf("%s SET %s was counted", table, set)
			}
		}
		before := version()
		other.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		if version() <= before {
			t.Error("a new account was not counted")
		}
	})
}

// TestBeginAheadKeyCheck: a write begun with BeginAhead on a kept key
// lookup sends the version read with its first statement (or its commit)
// as a check the database makes; on SQLite the write connection reads it
// as the transaction begins (a read there gets no kept lookup: it reads
// the version as it always did). When the lookup held, the write commits
// and the check says so; when another change moved the version, that
// statement, the commit or (SQLite) the begin fails with ErrKeyChanged,
// and nothing after the check ran: no write, not even the landlord's
// claim.
func TestBeginAheadKeyCheck(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		acct, fp := liveKey(t, e)
		kept := func() *store.KeyCheck {
			t.Helper()
			if _, err := e.DB.LookupKey(ctx, fp, "", e.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			_, kc := e.DB.KeptKey(fp, "", e.Clock.Now(), true)
			return kc
		}
		kc := kept()
		if _, read := e.DB.KeptKey(fp, "", e.Clock.Now(), false); (read != nil) != (e.DB.Engine() == store.Postgres) {
			t.Fatalf("%s: a read's kept lookup to check: %v", e.Name, read != nil)
		}
		if kc == nil {
			t.Fatal("no kept lookup for a write")
		}
		query := func(q string) (n int64) {
			t.Helper()
			if err := e.DB.WritePool().QueryRowContext(ctx, q, acct.LandlordID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		write := func(kc *store.KeyCheck, name string, commitOnly bool) error {
			tx, err := e.DB.BeginAhead(ctx, acct, kc)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if !commitOnly {
				p := newProperty(t, name)
				if _, err := tx.CreateProperty(ctx, acct, p); err != nil {
					return err
				}
			}
			return tx.Commit()
		}
		confirmed := e.DB.KeptConfirmed()
		if err := write(kc, "held", false); err != nil {
			t.Fatal(err)
		}
		if !kc.Confirm(ctx) || e.DB.KeptConfirmed() != confirmed+1 {
			t.Fatalf("the check of a write whose lookup held: held %v, confirmed %d -> %d", kc.Confirm(ctx), confirmed, e.DB.KeptConfirmed())
		}
		for _, commitOnly := range []bool{false, true} {
			kc := kept()
			// Another process renames the landlord: the version moves.
			if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE landlords SET name = name || '.' WHERE id = $1`, acct.LandlordID); err != nil {
				t.Fatal(err)
			}
			clock := query(`SELECT clock FROM landlords WHERE id = $1`)
			// Another process holds the landlord: a batch that did not
			// stop at the check would wait for it. (On SQLite, where a
			// holder would hold every writer, the clock below says it.)
			var holder *sql.Tx
			if e.DB.Engine() == store.Postgres {
				var err error
				if holder, err = e.DB.WritePool().BeginTx(ctx, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := holder.ExecContext(ctx, `UPDATE landlords SET name = name WHERE id = $1`, acct.LandlordID); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- write(kc, "moved", commitOnly) }()
			select {
			case err := <-done:
				if !errors.Is(err, store.ErrKeyChanged) {
					t.Fatalf("a write on a lookup that did not hold (commit only %v): %v", commitOnly, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("a write on a lookup that did not hold (commit only %v) waited for the landlord's lock", commitOnly)
			}
			if holder != nil {
				holder.Rollback()
			}
			if kc.Confirm(ctx) || kc.Err() != nil {
				t.Fatalf("the check says held %v, err %v", kc.Confirm(ctx), kc.Err())
			}
			if c := query(`SELECT clock FROM landlords WHERE id = $1`); c != clock {
				t.Fatalf("clock %d -> %d: the claim ran after a check that failed", clock, c)
			}
		}
		if n := query(`SELECT count(*) FROM properties WHERE landlord_id = $1 AND name = 'moved'`); n != 0 {
			t.Fatalf("%d properties written on a lookup that did not hold", n)
		}
	})
}

// TestWriteCheckOnWriter: on SQLite a write on a kept lookup reads its
// check on the write connection, in its own transaction, with the landlord
// claimed or without an account: with every reader connection taken, the
// writes still commit, and their checks say they held. (A read of the
// check on a reader would wait for one, there while holding the writers'
// turn.)
func TestWriteCheckOnWriter(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	ctx := t.Context()
	acct, fp := liveKey(t, e)
	if _, err := e.DB.LookupKey(ctx, fp, "", e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	readers := e.DB.Pools()["read"]
	for range readers.Stats().MaxOpenConnections {
		c, err := readers.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	wait, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, claimed := range []*rental.Account{acct, nil} {
		_, kc := e.DB.KeptKey(fp, "", e.Clock.Now(), true)
		tx, err := e.DB.BeginAhead(wait, claimed, kc)
		if err != nil {
			t.Fatalf("account %v: %v", claimed != nil, err)
		}
		if claimed != nil {
			if _, err := tx.CreateProperty(wait, acct, newProperty(t, "checked on the writer")); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if !kc.Confirm(wait) {
			t.Fatalf("account %v: the check did not hold", claimed != nil)
		}
	}
}

// liveKey links a landlord on the pro plan to a new application of a pro
// developer, with every scope, and makes a live key bound to that
// account: the account and the key's fingerprint.
func liveKey(t testing.TB, e storetest.Engine) (*rental.Account, string) {
	t.Helper()
	f := storetest.NewFixture(t, e.DB, rental.PlanPro)
	sec := storetest.Secret(t)
	acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
	return acct, sec.Fingerprint(f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID}))
}

// revokeChildEnv names the database and the key TestRevokeChild revokes.
const revokeChildEnv = "RENTAPI_TEST_REVOKE_CHILD"

// TestLookupKeySeesAnotherProcess: a kept lookup is refused, and the data
// version a read is tagged with moves on, at the next request once another
// process, not another DB of this one, revoked the key and wrote the
// landlord's data (on SQLite the versions behind both are read once per
// commit, and the commit is known from SQLite's shared index: see
// DB.accessVersions).
func TestLookupKeySeesAnotherProcess(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		sec := storetest.Secret(t)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		key := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
		fp := sec.Fingerprint(key)
		// request is one read's lookup of the key, with the data version
		// the read is tagged with (see KeyRun.WantVersion).
		request := func() (*rental.KeyOwner, string) {
			t.Helper()
			var o *rental.KeyOwner
			var version string
			e.DB.ServeKey(fp, "", e.Clock.Now(), false, func(k *store.KeyRun) bool {
				k.WantVersion()
				var err error
				if o, err = k.Owner(ctx, e.Clock.Now()); err != nil {
					t.Fatal(err)
				}
				q := e.DB.Read()
				if kc := k.Check(); kc != nil {
					q = e.DB.ReadChecking(kc)
				}
				if version, err = k.DataVersion(ctx, q, acct.LandlordID); errors.Is(err, store.ErrKeyChanged) {
					return false // on PostgreSQL: the kept lookup's check failed; run again
				} else if err != nil {
					t.Fatal(err)
				}
				return k.Held(ctx)
			})
			return o, version
		}
		o, before := request()
		for range 2 { // served from the kept lookup and versions
			if again, version := request(); again.Key.RevokedAt != nil || version != before {
				t.Fatalf("%+v, version %s, want %s", again, version, before)
			}
		}
		child := exec.Command(os.Args[0], "-test.run=^TestRevokeChild$")
		child.Env = append(os.Environ(), revokeChildEnv+"="+strings.Join([]string{e.DSN, o.Key.ID, acct.LandlordID}, " "))
		if out, err := child.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		o, after := request()
		if o.Key.RevokedAt == nil {
			t.Fatalf("the key revoked by another process is not seen: %+v", o)
		}
		if after == before {
			t.Fatalf("the landlord's data written by another process, and the data version still %s", after)
		}
	})
}

// TestRevokeChild is TestLookupKeySeesAnotherProcess's other process: in
// SQL of its own, it revokes the key and counts a write of the landlord
// that revokeChildEnv names.
func TestRevokeChild(t *testing.T) {
	args := strings.Fields(os.Getenv(revokeChildEnv))
	if len(args) != 3 {
		t.Skip("run by TestLookupKeySeesAnotherProcess")
	}
	ctx := context.Background()
	db, err := database.Open(ctx, args[0], database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.WritePool().ExecContext(ctx, `UPDATE api_keys SET revoked_at = 1 WHERE id = $1`, args[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WritePool().ExecContext(ctx, `UPDATE landlords SET data_version = data_version + 1 WHERE id = $1`, args[2]); err != nil {
		t.Fatal(err)
	}
}
