package api_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Paging 250 properties with limit 7, in both orders, while new ones are
// added, yields each pre-existing property exactly once.
func TestPagingWhileInserting(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		key := h.liveKey(f, acct.ID)
		existing := map[string]bool{}
		err := e.DB.InTx(t.Context(), func(tx *store.Tx) error {
			for i := range 250 {
				p, _ := rental.NewProperty(rental.PropertyChange{Name: rental.Of(fmt.Sprint("P", i)), ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)})
				c, err := tx.CreateProperty(t.Context(), acct, p)
				if err != nil {
					return err
				}
				existing[c.ID] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, order := range []string{"asc", "desc"} {
			seen := map[string]int{}
			cursor := ""
			pages := 0
			for {
				path := "/v1/properties?limit=7&order=" + order
				if cursor != "" {
					path += "&cursor=" + url.QueryEscape(cursor)
				}
				res := h.do(req{key: key, method: "GET", path: path})
				want(t, res, http.StatusOK)
				body := res.json()
				for _, it := range body["data"].([]any) {
					m := it.(map[string]any)
					id := m["id"].(string)
					seen[id]++
				}
				pages++
				// Someone adds a property between every two pages.
				want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("new")}), http.StatusCreated)
				pg := body["pagination"].(map[string]any)
				if pg["has_more"] != true {
					if pg["next_cursor"] != nil {
						t.Fatal("next_cursor on the last page")
					}
					break
				}
				cursor = pg["next_cursor"].(string)
				if len(cursor) > 200 {
					t.Fatalf("cursor of %d characters", len(cursor))
				}
			}
			for id := range existing {
				if seen[id] != 1 {
					t.Fatalf("%s: %s seen %d times", order, id, seen[id])
				}
			}
			for id, n := range seen {
				if n != 1 {
					t.Fatalf("%s: %s seen %d times", order, id, n)
				}
			}
			t.Logf("%s %s: %d pages, %d items", e.Name, order, pages, len(seen))
		}
	})
}

func TestCursorTampering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	f := h.fixture(rental.PlanEnterprise)
	key := h.testKey(f)
	for i := range 5 {
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property(fmt.Sprint(i))}), http.StatusCreated)
	}
	res := h.do(req{key: key, method: "GET", path: "/v1/properties?limit=2"})
	cursor := res.json()["pagination"].(map[string]any)["next_cursor"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		t.Fatal(err)
	}
	// Every single flipped bit is refused.
	for i := range len(raw) * 8 {
		b := append([]byte(nil), raw...)
		b[i/8] ^= 1 << (i % 8)
		res := h.do(req{key: key, method: "GET", path: "/v1/properties?limit=2&cursor=" + base64.RawURLEncoding.EncodeToString(b)})
		want(t, res, http.StatusBadRequest, "invalid_cursor")
	}
	// A cursor from the other order, another account, garbage, or too long.
	other := h.testKey(h.fixture(rental.PlanEnterprise))
	for _, rq := range []req{
		{key: key, path: "/v1/properties?order=asc&limit=2&cursor=" + cursor},
		{key: other, path: "/v1/properties?limit=2&cursor=" + cursor},
		{key: key, path: "/v1/properties?cursor=not-a-cursor"},
		{key: key, path: "/v1/properties?cursor=a" + cursor},
	} {
		rq.method = "GET"
		want(t, h.do(rq), http.StatusBadRequest, "invalid_cursor")
	}
	long := make([]byte, 201)
	for i := range long {
		long[i] = 'a'
	}
	want(t, h.do(req{key: key, method: "GET", path: "/v1/properties?cursor=" + string(long)}), http.StatusBadRequest, "invalid_cursor")
	// The same cursor with the same order works, with any limit.
	want(t, h.do(req{key: key, method: "GET", path: "/v1/properties?limit=3&cursor=" + cursor}), http.StatusOK)
}

func TestListParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanEnterprise))
	for path, code := range map[string]string{
		"/v1/properties?limit=0":             "invalid_parameter",
		"/v1/properties?limit=101":           "invalid_parameter",
		"/v1/properties?limit=ten":           "invalid_parameter",
		"/v1/properties?order=sideways":      "invalid_parameter",
		"/v1/properties?limit=1&limit=2":     "invalid_parameter",
		"/v1/properties?colour=red":          "unknown_parameter",
		"/v1/properties/prop_x?expand=rooms": "unknown_parameter",
		"/v1/account?limit=1":                "unknown_parameter",
	} {
		res := h.do(req{key: key, method: "GET", path: path})
		want(t, res, http.StatusBadRequest, code)
		if res.errField("param") == "" {
			t.Fatalf("%s: no error.param", path)
		}
	}
	want(t, h.do(req{key: key, method: "GET", path: "/v1/properties?limit=100&order=asc"}), http.StatusOK)
}
