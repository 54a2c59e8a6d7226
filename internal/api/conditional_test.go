package api_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Conditional GETs: a strong ETag on every 200 of an object or a list; the
// same tag in If-None-Match is 304 with no body, not counted against the
// quota; the tag changes with the answer (written on one process, read on
// another), with the key's scopes, and a 404 stays a 404.
func TestConditionalRequests(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		noLimits := func(c *api.Config) { c.NoRateLimits = true }
		a, b := newHarness(t, e, noLimits), newHarness(t, e.Another(t), noLimits)
		f := a.fixture(rental.PlanFree)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		key := a.liveKey(f, acct.ID)
		narrow := a.liveKey(f, acct.ID, rental.ScopePropertiesRead)
		want(t, a.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Tag")}), http.StatusCreated)
		get := func(h *harness, key, path string, headers ...string) *result {
			t.Helper()
			return h.do(req{key: key, method: "GET", path: path, headers: headers})
		}
		remaining := func(r *result) int {
			n, err := strconv.Atoi(r.header.Get("X-Quota-Remaining"))
			if err != nil {
				t.Fatalf("X-Quota-Remaining %q", r.header.Get("X-Quota-Remaining"))
			}
			return n
		}

		first := get(a, key, "/v1/properties")
		want(t, first, http.StatusOK)
		tag := first.header.Get("ETag")
		if len(tag) != 24 || tag[0] != '"' {
			t.Fatalf("ETag %q", tag)
		}
		if again := get(b, key, "/v1/properties"); again.header.Get("ETag") != tag {
			t.Fatalf("another process tags the same answer %q, not %q", again.header.Get("ETag"), tag)
		}
		// A page with more pages after it (its next_cursor sealed) is the
		// same answer on every request and process, so its tag holds too.
		want(t, a.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Tag 2")}), http.StatusCreated)
		paged := get(a, key, "/v1/properties?limit=1")
		if more, _ := paged.json()["pagination"].(map[string]any)["has_more"].(bool); !more {
			t.Fatalf("limit=1 of two properties: %s", paged.body)
		}
		for _, h := range []*harness{a, b} {
			if again := get(h, key, "/v1/properties?limit=1", "If-None-Match: "+paged.header.Get("ETag")); again.status != http.StatusNotModified {
				t.Fatalf("the same page again: %d %s (tag %q, was %q)", again.status, again.body, again.header.Get("ETag"), paged.header.Get("ETag"))
			}
		}
		first = get(a, key, "/v1/properties")
		tag = first.header.Get("ETag")

		// 304s: the tag, a list of tags, a weak form of it, and *.
		var before int
		for i, inm := range []string{tag, `"other", ` + tag, "W/" + tag, "*"} {
			res := get(a, key, "/v1/properties", "If-None-Match: "+inm)
			want(t, res, http.StatusNotModified)
			if len(res.body) != 0 || res.header.Get("ETag") != tag || res.header.Get("X-Request-ID") == "" {
				t.Fatalf("304 for %s: %q, headers %v", inm, res.body, res.header)
			}
			// The first 304 shows the 200s before it counted; no 304 counts.
			if n := remaining(res); i > 0 && n != before {
				t.Fatalf("a 304 was counted: %d requests left after it, %d before", n, before)
			} else {
				before = n
			}
		}
		if n := remaining(get(a, key, "/v1/properties", "If-None-Match: "+tag)); n != before {
			t.Fatalf("%d left, %d before", n, before)
		}
		want(t, get(a, key, "/v1/properties", `If-None-Match: "stale"`), http.StatusOK)
		if n := remaining(get(a, key, "/v1/properties", "If-None-Match: "+tag)); n != before-1 {
			t.Fatalf("the 200 between was not counted: %d left, %d before", n, before)
		}

		// Written on one process, read on the other: the new answer.
		want(t, a.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Tag 2")}), http.StatusCreated)
		changed := get(b, key, "/v1/properties", "If-None-Match: "+tag)
		want(t, changed, http.StatusOK)
		if len(changed.json()["data"].([]any)) != 3 || changed.header.Get("ETag") == tag {
			t.Fatalf("after a write: %s, tag %s", changed.body, changed.header.Get("ETag"))
		}
		tag = changed.header.Get("ETag")
		// The same body through a key of other scopes is another tag.
		other := get(a, narrow, "/v1/properties", "If-None-Match: "+tag)
		want(t, other, http.StatusOK)
		if other.header.Get("ETag") == tag {
			t.Fatal("a key of other scopes got the same tag")
		}
		// An object's own tag; a 404 stays a 404, whatever If-None-Match says.
		id := changed.json()["data"].([]any)[0].(map[string]any)["id"].(string)
		obj := get(a, key, "/v1/properties/"+id)
		want(t, get(a, key, "/v1/properties/"+id, "If-None-Match: "+obj.header.Get("ETag")), http.StatusNotModified)
		want(t, get(a, key, "/v1/properties/prop_000000000000000000000000", "If-None-Match: *"), http.StatusNotFound, "resource_not_found")
		// Writes carry no tag, and If-None-Match does not stop them.
		res := a.do(req{key: key, method: "PATCH", path: "/v1/properties/" + id, body: map[string]any{"name": "Baan Tag 3"},
			headers: []string{"If-None-Match: *"}})
		want(t, res, http.StatusOK)
		if res.header.Get("ETag") != "" {
			t.Fatalf("a write answered with ETag %s", res.header.Get("ETag"))
		}
	})
}

// Tags by the landlord's data version: known before the answer is made,
// they move with every write of the landlord's data, whoever makes it (the
// API, the jobs a sandbox's clock runs, a sandbox's reset, another
// process), and with nothing of another landlord's; the path and query are
// part of the tag. The reads whose answers change without such a write
// (the account, the events, the clock) are tagged by their bytes.
func TestConditionalVersionTags(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		noLimits := func(c *api.Config) { c.NoRateLimits = true }
		a, b := newHarness(t, e, noLimits), newHarness(t, e.Another(t), noLimits)
		get := func(h *harness, key, path, tag string) *result {
			t.Helper()
			return h.do(req{key: key, method: "GET", path: path, headers: []string{"If-None-Match: " + tag}})
		}
		tagOf := func(h *harness, key, path string) string {
			t.Helper()
			res := h.do(req{key: key, method: "GET", path: path})
			want(t, res, http.StatusOK)
			return res.header.Get("ETag")
		}

		// A sandbox's bills: its clock's jobs make them overdue, and the
		// tag moves with them; then its reset.
		f := a.fixture(rental.PlanEnterprise)
		sandbox := a.testKey(f)
		issuedBills(t, a, sandbox, 3)
		const bills = "/v1/bills?status=issued&limit=100"
		tag := tagOf(a, sandbox, bills)
		want(t, get(b, sandbox, bills, tag), http.StatusNotModified)
		if tagOf(a, sandbox, "/v1/bills?limit=100&status=issued") == tag {
			t.Fatal("another query string has the same tag")
		}
		advance(t, a, sandbox, 40)
		moved := get(b, sandbox, bills, tag)
		want(t, moved, http.StatusOK)
		if len(moved.json()["data"].([]any)) != 0 || moved.header.Get("ETag") == tag {
			t.Fatalf("after the bills fell overdue: %s, tag %s", moved.body, moved.header.Get("ETag"))
		}
		tag = moved.header.Get("ETag")
		want(t, get(a, sandbox, bills, tag), http.StatusNotModified)
		want(t, a.do(req{key: sandbox, method: "POST", path: "/v1/test-helpers/sandbox/reset"}), http.StatusOK)
		want(t, get(b, sandbox, bills, tag), http.StatusOK)

		// A live landlord's tag does not move with another's writes, and
		// moves with its own, on the other process too.
		live := a.fixture(rental.PlanFree)
		acct := live.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		key := a.liveKey(live, acct.ID)
		want(t, a.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Version")}), http.StatusCreated)
		tag = tagOf(a, key, "/v1/properties")
		want(t, a.do(req{key: sandbox, method: "POST", path: "/v1/properties", body: property("Baan Elsewhere")}), http.StatusCreated)
		want(t, get(b, key, "/v1/properties", tag), http.StatusNotModified)
		want(t, b.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Version 2")}), http.StatusCreated)
		res := get(a, key, "/v1/properties", tag)
		want(t, res, http.StatusOK)
		if len(res.json()["data"].([]any)) != 2 {
			t.Fatalf("after a write on the other process: %s", res.body)
		}

		// Reads tagged by their bytes still answer 304 to their tag.
		for _, path := range []string{"/v1/account", "/v1/events?limit=5"} {
			tag := tagOf(a, key, path)
			want(t, get(b, key, path, tag), http.StatusNotModified)
		}
	})
}

// Answers kept by their version tag (see answers): the same bytes as the
// answer made anew, never another account's or another key's, and never
// one a write has made stale, on either process.
func TestKeptAnswers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		noLimits := func(c *api.Config) { c.NoRateLimits = true }
		a := newHarness(t, e, noLimits)
		b := newHarness(t, e.Another(t), noLimits, func(c *api.Config) { c.NoKeptAnswers = true })
		f := a.fixture(rental.PlanFree)
		// Two landlords at the same data version, each with a property of
		// its own: the same path, the same version number.
		var keys []string
		for i, name := range []string{"Baan Kept A", "Baan Kept B"} {
			acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
			keys = append(keys, a.liveKey(f, acct.ID))
			want(t, a.do(req{key: keys[i], method: "POST", path: "/v1/properties", body: property(name)}), http.StatusCreated)
		}
		get := func(h *harness, key string) *result {
			t.Helper()
			res := h.do(req{key: key, method: "GET", path: "/v1/properties"})
			want(t, res, http.StatusOK)
			return res
		}
		for round := range 2 {
			for i, key := range keys {
				kept, made := get(a, key), get(b, key)
				if string(kept.body) != string(made.body) || kept.header.Get("ETag") != made.header.Get("ETag") {
					t.Fatalf("round %d, landlord %d: kept %s (%s), made %s (%s)", round, i,
						kept.body, kept.header.Get("ETag"), made.body, made.header.Get("ETag"))
				}
				own, other := []string{"Baan Kept A", "Baan Kept B"}[i], []string{"Baan Kept B", "Baan Kept A"}[i]
				if len(kept.json()["data"].([]any)) != 1+round || !strings.Contains(string(kept.body), own) || strings.Contains(string(kept.body), other) {
					t.Fatalf("round %d, landlord %d sees %s", round, i, kept.body)
				}
			}
			// A write on the other process: the next read is made anew.
			for _, key := range keys {
				want(t, b.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Kept More")}), http.StatusCreated)
			}
		}
	})
}

// BenchmarkConditionalGet times GET /v1/bills?limit=20 (20 bills of the
// sandbox's shape) answered 200, then the same with its ETag in
// If-None-Match, answered 304, over HTTP in one process, one request at a
// time: a 304 spares the body's transfer, and (the tag being made from
// the answer) none of the work of making it.
//
//	go test ./internal/api -run '^$' -bench ConditionalGet -benchtime 2000x
func BenchmarkConditionalGet(b *testing.B) { benchEach(b, benchConditional) }

func benchConditional(b *testing.B, e storetest.Engine) {
	hs, sec := benchServer(b, e, api.Config{})
	f, acct := billsPage(b, e)
	key := f.Key(b, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
	get := func(inm string) (int, string) {
		r, _ := http.NewRequest(http.MethodGet, hs.URL+"/v1/bills?limit=20", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		if inm != "" {
			r.Header.Set("If-None-Match", inm)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, res.Header.Get("ETag")
	}
	_, tag := get("")
	for _, c := range []struct {
		name string
		inm  string
		want int
	}{{"200", "", http.StatusOK}, {"304", tag, http.StatusNotModified}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if status, _ := get(c.inm); status != c.want {
					b.Fatalf("%d, want %d", status, c.want)
				}
			}
		})
	}
}
