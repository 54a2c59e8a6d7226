package api_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// linkedOnTwoServers is two API servers over one database (two processes)
// and a developer's application linked to a landlord on the pro plan.
func linkedOnTwoServers(t *testing.T, e storetest.Engine) (one, two *harness, f storetest.Fixture, acct *rental.Account) {
	t.Helper()
	one = newHarness(t, e)
	two = secondServer(t, one)
	f = one.fixture(rental.PlanPro)
	return one, two, f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
}

// revokeKeys revokes the application's keys that match, as another
// process would.
func revokeKeys(t *testing.T, e storetest.Engine, f storetest.Fixture, match func(rental.APIKey) bool) {
	t.Helper()
	ctx := t.Context()
	keys, err := e.DB.Read().APIKeys(ctx, f.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if match(k) {
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, k.ID) }); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestKeptLookupAcrossServers: a read served on the key's kept lookup (on
// PostgreSQL, confirmed in the same round trip as its query) answers as a
// fresh lookup would. After another process revokes the key or ends the
// link, the next request is refused, even one that fails its own checks
// before reaching the database; changes the lookup does not read are
// seen as usual.
func TestKeptLookupAcrossServers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		other := one.liveKey(f, "")
		get := func(key, path string, headers ...string) *result {
			t.Helper()
			return two.do(req{key: key, method: "GET", path: path, headers: headers})
		}
		for range 3 { // the first looks up and keeps; the others run on what was kept
			if res := get(key, "/v1/properties"); res.status != http.StatusOK || len(res.json()["data"].([]any)) != 0 {
				t.Fatalf("before: %d %s", res.status, res.body)
			}
		}
		// A change the lookup does not read: seen at once.
		if res := one.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": "Baan Suk", "electricity_rate": 800, "water_rate": 1800},
			headers: []string{"Idempotency-Key: p1"}}); res.status != http.StatusCreated {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
		if res := get(key, "/v1/properties"); res.status != http.StatusOK || len(res.json()["data"].([]any)) != 1 {
			t.Fatalf("after a create on the other server: %d %s", res.status, res.body)
		}
		get(other, "/v1/properties", "SERVICE-Account: "+acct.ID) // kept for the unbound key too
		revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.AccountID == acct.ID })
		// A bad parameter fails before any query, on the kept lookup: the
		// answer still waits for the check, and the key is refused.
		for _, path := range []string{"/v1/properties?limit=abc", "/v1/properties", "/v1/properties"} {
			if res := get(key, path); res.status != http.StatusUnauthorized || res.code() != "invalid_api_key" {
				t.Fatalf("%s with the revoked key: %d %s", path, res.status, res.body)
			}
		}
		// HEAD is not in the document (send reports that); its status is what counts here.
		if res, _ := two.send(req{key: key, method: "HEAD", path: "/v1/properties"}); res == nil || res.status != http.StatusUnauthorized {
			t.Fatalf("HEAD with the revoked key: %+v", res)
		}
		// The other key, kept too, is refused once the link ends.
		if res := get(other, "/v1/properties", "SERVICE-Account: "+acct.ID); res.status != http.StatusOK {
			t.Fatalf("other key before the link ends: %d %s", res.status, res.body)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		if res := get(other, "/v1/properties", "SERVICE-Account: "+acct.ID); res.status != http.StatusForbidden || res.code() != "account_access_revoked" {
			t.Fatalf("other key after the link ended: %d %s", res.status, res.body)
		}
	})
}

// TestKeptLookupEarlyRefusals: on a kept lookup, every answer waits for
// the check, the refusals made before any query included (an unknown
// parameter, a bad path ID, a missing scope, a bad limit), and a key
// revoked meanwhile gets 401 without a header of the discarded run. On
// PostgreSQL the kept lookup is really what answers before the revocation.
func TestKeptLookupEarlyRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one, two, f, acct := linkedOnTwoServers(t, e)
		for _, path := range []string{"/v1/properties?bogus=1", "/v1/properties/" + strings.Repeat("x", 80), "/v1/properties?limit=abc", "/v1/properties"} {
			key := one.liveKey(f, acct.ID)
			narrow := one.liveKey(f, acct.ID, rental.ScopeBillsRead) // no properties:read
			if res := two.do(req{key: key, method: "GET", path: "/v1/properties"}); res.status != http.StatusOK {
				t.Fatalf("before: %d %s", res.status, res.body)
			}
			if res := two.do(req{key: narrow, method: "GET", path: "/v1/properties"}); res.code() != "insufficient_scope" {
				t.Fatalf("narrow key before: %d %s", res.status, res.body)
			}
			confirmed := two.e.DB.KeptConfirmed()
			if res := two.do(req{key: key, method: "GET", path: "/v1/properties"}); res.status != http.StatusOK {
				t.Fatalf("before, again: %d %s", res.status, res.body)
			}
			if e.Name == "postgres" && two.e.DB.KeptConfirmed() == confirmed {
				t.Fatal("the kept lookup did not answer")
			}
			revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.RevokedAt == nil })
			for _, k := range []string{key, narrow} {
				res := two.do(req{key: k, method: "GET", path: path})
				if res.status != http.StatusUnauthorized || res.code() != "invalid_api_key" {
					t.Fatalf("%s with a revoked key: %d %s", path, res.status, res.body)
				}
				for _, h := range []string{"X-RateLimit-Limit", "X-Quota-Limit", "X-SERVICE-Mode"} {
					if v := res.header.Get(h); v != "" {
						t.Errorf("%s: the 401 carries %s: %s, from the discarded run", path, h, v)
					}
				}
			}
		}
	})
}

// TestKeptLookupConditional: a read answered from its tag (a 304, or the
// answer kept under it) on a key's kept lookup makes the lookup's check in
// the statement that reads the tag; after another process revokes the key
// the same conditional read is 401, not 304.
func TestKeptLookupConditional(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		first := two.do(req{key: key, method: "GET", path: "/v1/properties"})
		want(t, first, http.StatusOK)
		tag := first.header.Get("ETag")
		conditional := req{key: key, method: "GET", path: "/v1/properties", headers: []string{"If-None-Match: " + tag}}
		confirmed := two.e.DB.KeptConfirmed()
		want(t, two.do(conditional), http.StatusNotModified)
		if kept := two.do(req{key: key, method: "GET", path: "/v1/properties"}); kept.status != http.StatusOK || string(kept.body) != string(first.body) {
			t.Fatalf("the kept answer: %d %s", kept.status, kept.body)
		}
		if e.Name == "postgres" && two.e.DB.KeptConfirmed() != confirmed+2 {
			t.Fatalf("%d reads confirmed the kept lookup, want 2", two.e.DB.KeptConfirmed()-confirmed)
		}
		revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.RevokedAt == nil })
		if res := two.do(conditional); res.status != http.StatusUnauthorized || res.code() != "invalid_api_key" {
			t.Fatalf("with the key revoked: %d %s", res.status, res.body)
		}
	})
}

// TestKeptLookupWrites: a write runs on the key's kept lookup too (on
// PostgreSQL the version read travels with its transaction's first
// statement), and after another process revokes the key the next write is
// refused and writes nothing, with or without an Idempotency-Key, even one
// whose key was used before.
func TestKeptLookupWrites(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		one.liveKey(f, "") // an unbound key, to revoke below
		// revoke revokes the keys bound to account ("": the unbound one).
		revoke := func(account string) {
			t.Helper()
			revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.AccountID == account })
		}
		post := func(name string, headers ...string) *result {
			t.Helper()
			return two.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": name, "electricity_rate": 800, "water_rate": 1800}, headers: headers})
		}
		if res := post("first", "Idempotency-Key: w1"); res.status != http.StatusCreated {
			t.Fatalf("first: %d %s", res.status, res.body)
		}
		confirmed := two.e.DB.KeptConfirmed()
		if res := post("second", "Idempotency-Key: w2"); res.status != http.StatusCreated {
			t.Fatalf("second: %d %s", res.status, res.body)
		}
		if res := post("first", "Idempotency-Key: w1"); res.status != http.StatusCreated || res.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", res.status, res.body)
		}
		// On SQLite too: a write's check is read in its transaction.
		if two.e.DB.KeptConfirmed() < confirmed+2 {
			t.Fatal("the kept lookup did not answer the writes")
		}
		// Another key's revocation moves the access version: the write
		// finds its kept lookup out of date and runs again, on the body it
		// was sent.
		revoke("")
		if res := post("third", "Idempotency-Key: w3"); res.status != http.StatusCreated || res.json()["data"].(map[string]any)["name"] != "third" {
			t.Fatalf("after a change the lookup reads: %d %s", res.status, res.body)
		}
		revoke(acct.ID)
		// The first write after it runs on the kept lookup, whose check
		// fails as its transaction begins: its malformed body is not
		// answered 400, the key's revocation is.
		if res := two.do(req{key: key, method: "POST", path: "/v1/properties", body: "{"}); res.status != http.StatusUnauthorized || res.code() != "invalid_api_key" {
			t.Fatalf("a bad body with the revoked key: %d %s", res.status, res.body)
		}
		for _, h := range [][]string{{"Idempotency-Key: w4"}, nil, {"Idempotency-Key: w1"}} {
			if res := post("after", h...); res.status != http.StatusUnauthorized || res.code() != "invalid_api_key" || res.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("write %v with the revoked key: %d %s", h, res.status, res.body)
			}
		}
		props, _, err := e.DB.Read().ListProperties(ctx, acct, store.Page{Limit: 10})
		if err != nil || len(props) != 3 {
			t.Fatalf("properties: %d %v", len(props), err)
		}
	})
}

// TestRunAgainTakesOneToken: a write whose kept lookup no longer holds
// (another process moved the access version: here, by revoking another
// key) runs again on a lookup made now, and takes one token of the
// developer's per-second limit, as a write run once does, not two: a
// developer one token from the limit is not refused because of a change
// that was not theirs.
func TestRunAgainTakesOneToken(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		one.liveKey(f, "") // an unbound key, to revoke
		// The harness's clock stands still: the bucket does not refill.
		left := rental.PlanPro.Limits().Burst
		post := func(name string) {
			t.Helper()
			res := two.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": name, "electricity_rate": 800, "water_rate": 1800}})
			if left--; res.status != http.StatusCreated || res.header.Get("X-RateLimit-Remaining") != fmt.Sprint(left) {
				t.Fatalf("%s: %d, X-RateLimit-Remaining %q, want %d: %s", name, res.status, res.header.Get("X-RateLimit-Remaining"), left, res.body)
			}
		}
		post("first") // on a lookup made now, kept for the next
		post("second")
		confirmed := two.e.DB.KeptConfirmed()
		revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.AccountID == "" })
		post("third")
		if two.e.DB.KeptConfirmed() != confirmed {
			t.Fatal("a kept lookup held after the access version moved")
		}
	})
}

// TestClaimAheadLost: on PostgreSQL a write first claims its landlord
// ahead, predicting the clock's tick from what its process last committed.
// When another process took that tick (here the clock is first run a
// minute ahead, as a burst of events does), the claim loses and the write
// runs again with the usual claim, and so do that process's writes of the
// landlord for a second; after that, a prediction from its own last commit
// holds again. Every write is answered once, at the very tick a claim as
// usual gives, and a retry with its key replays the answer.
func TestClaimAheadLost(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		pg := e.DB.Engine() == store.Postgres
		var tick int64
		if err := e.DB.WritePool().QueryRowContext(ctx, `UPDATE landlords SET clock = clock + 60000 WHERE id = $1 RETURNING clock`, acct.LandlordID).Scan(&tick); err != nil {
			t.Fatal(err)
		}
		for i, w := range []struct {
			h    *harness
			idem bool
			lost bool // the claim ahead loses
		}{
			{one, true, true},   // knows nothing of the moved clock
			{two, true, true},   // nor does the other process
			{one, true, false},  // within a second of its loss: claims as usual
			{one, false, false}, // a second later: its last commit predicts the tick
			{one, true, false},
			{two, false, true}, // one's writes moved the clock past two's last
		} {
			if i == 3 {
				e.Clock.Advance(2 * time.Second) // the pause after a loss is over
			}
			name := fmt.Sprintf("write-%d", i)
			var headers []string
			if w.idem {
				headers = []string{"Idempotency-Key: " + name}
			}
			lostBefore := w.h.e.DB.ClaimsAheadLost()
			do := func() *result {
				t.Helper()
				res := w.h.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": name, "electricity_rate": 800, "water_rate": 1800}, headers: headers})
				if res.status != http.StatusCreated {
					t.Fatalf("%s: %d %s", name, res.status, res.body)
				}
				return res
			}
			res := do()
			var created int64
			if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT created_at FROM properties WHERE landlord_id = $1 AND name = $2`, acct.LandlordID, name).Scan(&created); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			tick++
			if created != tick {
				t.Fatalf("%s created at %d, want the clock's next tick %d", name, created, tick)
			}
			if lost := w.h.e.DB.ClaimsAheadLost() - lostBefore; pg && lost != map[bool]int64{false: 0, true: 1}[w.lost] {
				t.Fatalf("%s: %d claims ahead lost", name, lost)
			}
			if w.idem {
				if again := do(); again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(res.body) {
					t.Fatalf("retry of %s: %s %s", name, again.header.Get("Idempotent-Replayed"), again.body)
				}
			}
		}
		var n int
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*) FROM properties WHERE landlord_id = $1`, acct.LandlordID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 6 {
			t.Fatalf("%d properties, want 6", n)
		}
	})
}

// A write decoded before its transaction (a batch of readings) that runs
// again, its claim ahead lost to another process's tick, answers as one
// run would: each item's result once, the one not decoded among them, and
// the answer kept for its Idempotency-Key.
func TestPreparedWriteRunsAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		prop := one.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Again")})
		want(t, prop, http.StatusCreated)
		room := one.do(req{key: key, method: "POST", path: "/v1/properties/" + prop.data()["id"].(string) + "/rooms", body: map[string]any{"number": "101", "monthly_rent": 350000}})
		want(t, room, http.StatusCreated)
		id := room.data()["id"].(string)
		// The other process ticks the clock on: one's claim ahead loses.
		if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE landlords SET clock = clock + 60000 WHERE id = $1`, acct.LandlordID); err != nil {
			t.Fatal(err)
		}
		lost := one.e.DB.ClaimsAheadLost()
		body := map[string]any{"readings": []any{reading(id, "2026-10", 100, 10), 5, reading(id, "2026-10", 200, 20), reading(id, "2026-11", 150, 15)}}
		batch := req{key: key, method: "POST", path: "/v1/meter-readings/batch", body: body, headers: []string{"Idempotency-Key: again"}}
		res := one.do(batch)
		want(t, res, http.StatusOK)
		if e.DB.Engine() == store.Postgres && one.e.DB.ClaimsAheadLost() != lost+1 {
			t.Fatalf("%d claims ahead lost, want 1: the batch did not run again", one.e.DB.ClaimsAheadLost()-lost)
		}
		got := batchItems(t, res)
		if len(got) != 4 || got[0].Status != 201 || got[1].Status != 400 || got[2].Status != 409 || got[3].Status != 201 ||
			got[0].Error != nil || got[1].Reading != nil || got[2].Reading != nil || got[3].Error != nil {
			t.Fatalf("results: %s", res.body)
		}
		if again := two.do(batch); again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(res.body) {
			t.Fatalf("retry on the other process: %s %s", again.header.Get("Idempotent-Replayed"), again.body)
		}
	})
}

// TestClaimsAheadAcrossServers: two servers write one landlord at once,
// each predicting the clock from its own commits, so their claims ahead
// keep meeting the other's ticks. Every write is answered 201 once, and
// the landlord's clock gives each its own tick: no two writes share a
// creation time, and the clock ends at the last of them.
func TestClaimsAheadAcrossServers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		one, two, f, acct := linkedOnTwoServers(t, e)
		key := one.liveKey(f, acct.ID)
		const waves, perWave = 5, 8
		const writes = waves * perWave
		for wave := range waves {
			// Past the pause after a loss: each wave claims ahead again.
			e.Clock.Advance(2 * time.Second)
			var wg sync.WaitGroup
			for j := range perWave {
				i, h := wave*perWave+j, []*harness{one, two}[j%2]
				wg.Go(func() {
					var headers []string
					if i%3 != 0 {
						headers = []string{fmt.Sprintf("Idempotency-Key: across-%d", i)}
					}
					res, err := h.send(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": fmt.Sprintf("across-%d", i), "electricity_rate": 800, "water_rate": 1800}, headers: headers})
					if err != nil || res.status != http.StatusCreated {
						t.Errorf("write %d: %v %v", i, err, res)
					}
				})
			}
			wg.Wait()
		}
		var n, distinct int
		var last, clock int64
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT created_at), max(created_at) FROM properties WHERE landlord_id = $1`, acct.LandlordID).Scan(&n, &distinct, &last); err != nil {
			t.Fatal(err)
		}
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT clock FROM landlords WHERE id = $1`, acct.LandlordID).Scan(&clock); err != nil {
			t.Fatal(err)
		}
		if n != writes || distinct != writes || clock < last {
			t.Fatalf("%d properties with %d creation times, the last %d, clock %d; want %d each, clock at or after the last", n, distinct, last, clock, writes)
		}
		// The first wave alone makes a loss certain: both processes predict
		// the same tick from the wall clock, and only one can have it.
		if lost := one.e.DB.ClaimsAheadLost() + two.e.DB.ClaimsAheadLost(); e.DB.Engine() == store.Postgres && lost == 0 {
			t.Fatal("no claim ahead met the other process's tick")
		}
	})
}

// TestKeptLookupStalledBody: a write whose body stalls is answered 408
// request_timeout in the envelope on both engines, also when, on
// PostgreSQL, something the key's kept lookup reads changed while the body
// was awaited (another key was revoked), so that the request runs again on a
// lookup made then: net/http has cancelled the request's context by that
// time (the failed read ends it), and that lookup must not run on it. On
// PostgreSQL, when the change is the key's own revocation, the answer is
// the new lookup's: 401.
func TestKeptLookupStalledBody(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.BodyTimeout = time.Second })
		f := h.fixture(rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		// stalled sends a write whose body stops after its first byte,
		// runs meanwhile while the server waits for the rest, and returns
		// the answer.
		stalled := func(key string, meanwhile func()) *result {
			t.Helper()
			want(t, h.do(req{key: key, method: "GET", path: "/v1/properties"}), http.StatusOK) // the lookup is kept
			pr, pw := io.Pipe()
			defer pw.Close()
			r, _ := http.NewRequest("POST", h.url+"/v1/properties", pr)
			r.Header.Set("Authorization", "Bearer "+key)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Idempotency-Key", "stalled")
			type answer struct {
				res *result
				err error
			}
			done := make(chan answer, 1)
			go func() {
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					done <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				done <- answer{&result{status: resp.StatusCode, header: resp.Header, body: b}, err}
			}()
			pw.Write([]byte("{"))
			time.Sleep(300 * time.Millisecond) // the server has the key, and waits for the body
			meanwhile()
			a := <-done
			if a.err != nil {
				t.Fatalf("stalled write: %v", a.err)
			}
			if err := checkContract(r, a.res); err != nil {
				t.Error(err)
			}
			return a.res
		}
		key := h.liveKey(f, acct.ID)
		h.liveKey(f, "") // another key, revoked while the body is awaited
		res := stalled(key, func() { revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.AccountID == "" }) })
		want(t, res, http.StatusRequestTimeout, "request_timeout")
		if res.header.Get("X-RateLimit-Limit") == "" || res.header.Get("X-SERVICE-Mode") != "live" {
			t.Fatalf("408 headers: %v", res.header)
		}
		if e.Name != "postgres" {
			return // the key was looked up before the body, as SQLite always does: its answer stands
		}
		res = stalled(key, func() {
			revokeKeys(t, e, f, func(k rental.APIKey) bool {
				return k.Prefix == rental.KeyVisiblePrefix(key) && k.Last4 == rental.KeyLast4(key)
			})
		})
		want(t, res, http.StatusUnauthorized, "invalid_api_key")
	})
}
