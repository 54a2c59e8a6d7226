package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// owned is a real object and what its owner reaches it with.
type owned struct {
	id      string
	key     string
	headers []string
}

// foreignBodies are bodies the routes would take for an object of the
// caller's own, so that a write's answer is decided by its ID alone. A new
// write route that needs a body fails the walk (its made-up ID is not a
// 404) until it has one here.
var foreignBodies = map[string]any{
	"PATCH /v1/properties/{property_id}":        map[string]any{"name": "Foreign"},
	"POST /v1/properties/{property_id}/rooms":   map[string]any{"number": "F1", "monthly_rent": 100000},
	"PATCH /v1/rooms/{room_id}":                 map[string]any{"monthly_rent": 200000},
	"POST /v1/rooms/{room_id}/tenant":           map[string]any{"name": "Foreign", "phone": "0812345678"},
	"POST /v1/rooms/{room_id}/charges":          map[string]any{"description": "Foreign", "amount": 100, "month": "2026-11"},
	"PATCH /v1/tenants/{tenant_id}":             map[string]any{"name": "Foreign"},
	"PATCH /v1/meter-readings/{reading_id}":     map[string]any{"electricity": map[string]any{"current": 99999}},
	"PATCH /v1/webhook-endpoints/{endpoint_id}": map[string]any{"description": "Foreign"},
	"POST /v1/bills/{bill_id}/slips":            map[string]any{"qr_payload": "foreign-slip"},
	"POST /v1/properties/{property_id}/bills":   map[string]any{"month": "2026-11", "notify": true},
}

// pathParam finds the {name} parts of a route pattern.
var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// Every route that takes an ID in its path, given a real ID of the right
// kind that belongs to someone else, answers exactly as it answers a
// made-up ID of the same shape (404), and changes nothing: for another
// application's sandbox, for another landlord of the same application, and
// for the application's own sandbox and test-mode webhooks seen from live
// mode. The routes come from the router, so a new route is walked the day
// it is added, and one with a kind of ID this test cannot make fails it.
func TestForeignIDsOnEveryRoute(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) {
			c.NoRateLimits = true
			c.ChatLive = true
			c.LineChannelSecret = lineSecret
			c.SlipsLive = true
		})
		// Application A: its sandbox, and two landlords in live mode.
		p := newPayee(t, h, rental.LandlordStandard)
		open(t, p.link(t, h)) // the tenant opens the page: a pending payment
		mine := p.app.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		aLive, aTest := h.liveKey(p.app, mine.ID), h.testKey(p.app)
		// Application B: its sandbox, and a landlord in live mode.
		b := h.fixture(rental.PlanPro)
		bAcct := b.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		bTest, bLive := h.testKey(b), h.liveKey(b, "")

		merge := func(maps ...map[string]owned) map[string]owned {
			out := map[string]owned{}
			for _, m := range maps {
				for k, v := range m {
					out[k] = v
				}
			}
			return out
		}
		for _, c := range []struct {
			name   string
			caller string
			theirs map[string]owned
		}{
			{"another application", aTest, merge(accountIDs(t, h, bTest), appIDs(t, h, bTest))},
			{"another landlord", aLive, merge(accountIDs(t, h, p.key), appIDs(t, h, bLive, "SERVICE-Account: "+bAcct.ID))},
			{"the sandbox from live", aLive, merge(accountIDs(t, h, aTest), appIDs(t, h, aTest))},
		} {
			t.Run(c.name, func(t *testing.T) {
				hh := *h
				hh.t = t
				walkForeign(t, &hh, c.caller, c.theirs)
			})
		}
	})
}

// walkForeign calls every route with a path ID as the caller, once with a
// made-up ID and once with the foreign one, and wants the same answer.
func walkForeign(t *testing.T, h *harness, caller string, theirs map[string]owned) {
	routes := h.srv.Routes()
	// fetch reads an object with its owner's key, through the route that
	// shows one object of its kind.
	fetch := func(param string) *result {
		t.Helper()
		o := theirs[param]
		for _, r := range routes {
			if method, path, _ := strings.Cut(r, " "); method == "GET" && strings.HasSuffix(path, "/{"+param+"}") {
				return h.do(req{key: o.key, method: "GET", path: strings.Replace(path, "{"+param+"}", o.id, 1), headers: o.headers})
			}
		}
		t.Fatalf("no route shows one object by {%s}", param)
		return nil
	}
	before := map[string]string{}
	for param := range theirs {
		res := fetch(param)
		want(t, res, http.StatusOK) // the foreign object really exists
		before[param] = string(res.body)
	}

	walked := 0
	for _, route := range routes {
		params := pathParam.FindAllStringSubmatch(route, -1)
		if len(params) == 0 {
			continue
		}
		method, pattern, _ := strings.Cut(route, " ")
		madePath, realPath := pattern, pattern
		var ids []string
		known := true
		for _, m := range params {
			o, ok := theirs[m[1]]
			if !ok {
				t.Errorf("%s: the test cannot make another account's {%s}; teach accountIDs or appIDs", route, m[1])
				known = false
				continue
			}
			prefix := o.id[:strings.LastIndex(o.id, "_")]
			fake := rental.NewID(prefix)
			if len(fake) != len(o.id) {
				t.Fatalf("%s: made-up %s is not the shape of %s", route, fake, o.id)
			}
			madePath = strings.Replace(madePath, m[0], fake, 1)
			realPath = strings.Replace(realPath, m[0], o.id, 1)
			ids = append(ids, fake, o.id)
		}
		if !known {
			continue
		}
		call := func(path string) *result {
			t.Helper()
			r := req{key: caller, method: method, path: path, body: foreignBodies[route]}
			if method != "GET" {
				r.headers = []string{"Idempotency-Key: " + rental.NewID("idem")}
			}
			return h.do(r)
		}
		madeRes, realRes := call(madePath), call(realPath)
		if madeRes.status != http.StatusNotFound || madeRes.code() != "resource_not_found" {
			t.Errorf("%s with a made-up ID: %d %s; want 404 resource_not_found (a write needs a valid body in foreignBodies)", route, madeRes.status, madeRes.body)
			continue
		}
		if theirs, made := answer(realRes, ids), answer(madeRes, ids); theirs != made {
			t.Errorf("%s with their real ID answers\n%s\nbut with a made-up one\n%s", route, theirs, made)
		}
		walked++
	}
	if walked == 0 {
		t.Fatal("no route with a path ID was walked")
	}
	for param, b := range before {
		if res := fetch(param); res.status != http.StatusOK || string(res.body) != b {
			t.Errorf("their {%s} changed:\nbefore %s\nafter  %d %s", param, b, res.status, res.body)
		}
	}
}

// answer is a response as the client sees it, minus what differs between
// any two requests (the request ID) and with the IDs sent blanked out.
func answer(res *result, ids []string) string {
	body := res.json()
	if e, ok := body["error"].(map[string]any); ok {
		delete(e, "request_id")
	}
	b, _ := json.Marshal(body)
	s := string(b)
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, "<id>")
	}
	return http.StatusText(res.status) + " " + s
}

// accountIDs gives one object of each kind in the key's account, after a
// change that records an event.
func accountIDs(t *testing.T, h *harness, key string) map[string]owned {
	t.Helper()
	first := func(path string) owned {
		t.Helper()
		res := h.do(req{key: key, method: "GET", path: path + "?limit=1"})
		want(t, res, http.StatusOK)
		list, _ := res.json()["data"].([]any)
		if len(list) == 0 {
			t.Fatalf("%s is empty", path)
		}
		return owned{id: list[0].(map[string]any)["id"].(string), key: key}
	}
	room := first("/v1/rooms")
	want(t, h.do(req{key: key, method: "PATCH", path: "/v1/rooms/" + room.id, body: map[string]any{"monthly_rent": 123400}}), http.StatusOK)
	tenant := first("/v1/tenants")
	registerTenant(t, h, tenant.id)
	want(t, h.do(req{key: key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant.id, "text": "hello"},
		headers: []string{"Idempotency-Key: " + rental.NewID("idem")}}), http.StatusAccepted)
	// A payment link of an issued bill (the sandbox's sample payments have none).
	issued := h.do(req{key: key, method: "GET", path: "/v1/bills?status=issued&limit=1"}).json()["data"].([]any)
	if len(issued) == 0 {
		t.Fatal("no issued bill")
	}
	link := h.do(req{key: key, method: "POST", path: "/v1/bills/" + issued[0].(map[string]any)["id"].(string) + "/payment-link"})
	if link.status != http.StatusCreated && link.status != http.StatusOK {
		t.Fatalf("payment link: %d %s", link.status, link.body)
	}
	// A slip filed against it (no job runs here: it stays pending).
	want(t, h.do(req{key: key, method: "POST", path: "/v1/bills/" + issued[0].(map[string]any)["id"].(string) + "/slips",
		body: map[string]any{"qr_payload": "their-slip"}, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}}), http.StatusAccepted)
	charge := h.do(req{key: key, method: "POST", path: "/v1/rooms/" + room.id + "/charges", body: map[string]any{"description": "Internet", "amount": 30000, "recurring": true, "month": "2026-11"}})
	want(t, charge, http.StatusCreated)
	// A settlement: a tenant of a room of its own moves in and out.
	prop := first("/v1/properties")
	leaving := h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop.id + "/rooms", body: map[string]any{"number": "Z-out", "monthly_rent": 350000}})
	want(t, leaving, http.StatusCreated)
	leavingRoom := leaving.data()["id"].(string)
	want(t, h.do(req{key: key, method: "POST", path: "/v1/rooms/" + leavingRoom + "/tenant", body: map[string]any{"name": "Leaving", "phone": "0812345678"}}), http.StatusCreated)
	settlement := h.do(req{key: key, method: "POST", path: "/v1/rooms/" + leavingRoom + "/tenant/move-out"})
	want(t, settlement, http.StatusOK)
	return map[string]owned{
		"settlement_id":   {id: settlement.data()["id"].(string), key: key},
		"slip_id":         first("/v1/slips"),
		"charge_id":       {id: charge.data()["id"].(string), key: key},
		"payment_link_id": {id: link.data()["id"].(string), key: key},
		"notification_id": first("/v1/notifications"),
		"property_id":     first("/v1/properties"),
		"room_id":         room,
		"tenant_id":       first("/v1/tenants"),
		"meter_id":        first("/v1/meters"),
		"reading_id":      first("/v1/meter-readings"),
		"bill_id":         first("/v1/bills"),
		"payment_id":      first("/v1/payments"),
		"event_id":        first("/v1/events"),
	}
}

// appIDs registers a webhook endpoint of the key's application (in the
// key's mode) and sends it a test event, for an endpoint and a delivery.
func appIDs(t *testing.T, h *harness, key string, headers ...string) map[string]owned {
	t.Helper()
	res := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", headers: headers,
		body: map[string]any{"url": "https://hooks.example.com/theirs", "enabled_events": []string{"*"}}})
	want(t, res, http.StatusCreated)
	ep := owned{id: res.data()["id"].(string), key: key, headers: headers}
	res = h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + ep.id + "/test", headers: headers})
	want(t, res, http.StatusAccepted)
	return map[string]owned{
		"endpoint_id": ep,
		"delivery_id": {id: res.data()["id"].(string), key: key, headers: headers},
	}
}
