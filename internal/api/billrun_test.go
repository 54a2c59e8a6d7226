package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// month is a sandbox for bill runs: a key, a request helper that fails
// the test on any other status, and lists.
type month struct {
	h   *harness
	key string
}

func newMonth(t *testing.T, e storetest.Engine) *month {
	h := newHarness(t, e)
	return &month{h: h, key: h.testKey(h.fixture(rental.PlanEnterprise))}
}

// do sends a request with a fresh Idempotency-Key and wants status.
func (m *month) do(t *testing.T, method, path string, body any, status int) map[string]any {
	t.Helper()
	res := m.h.do(req{key: m.key, method: method, path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
	want(t, res, status)
	return res.data()
}

// room adds a room numbered number to prop, with a tenant when tenant is
// not empty (registered with the chat when registered), and the month's
// reading when reading; it returns the room and tenant IDs.
func (m *month) room(t *testing.T, prop, number, tenant string, registered, reading bool, month string) (room, tnt string) {
	t.Helper()
	room = m.do(t, "POST", "/v1/properties/"+prop+"/rooms", map[string]any{"number": number, "monthly_rent": 350000}, http.StatusCreated)["id"].(string)
	if tenant != "" {
		tnt = m.do(t, "POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": tenant, "phone": "0812345678"}, http.StatusCreated)["id"].(string)
		if registered {
			m.do(t, "POST", "/v1/test-helpers/tenants/"+tnt+"/line-register", nil, http.StatusOK)
		}
	}
	if reading {
		m.do(t, "POST", "/v1/meter-readings", map[string]any{"room_id": room, "month": month,
			"electricity": map[string]any{"previous": 1000, "current": 1100}, "water": map[string]any{"previous": 100, "current": 105}}, http.StatusCreated)
	}
	return room, tnt
}

// ids reads a list of strings.
func ids(v any) []string {
	var out []string
	for _, it := range v.([]any) {
		out = append(out, it.(string))
	}
	return out
}

// A bill run over a property with rooms of every kind: it bills those
// with a reading and no bill exactly as POST /v1/bills does, skips the
// others saying why, notifies the tenants the chat reaches (and only
// them), answers a replay as the first time, and a second run bills
// nothing.
func TestBillRun(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		m := newMonth(t, e)
		const nov = "2026-11"
		prop := m.do(t, "POST", "/v1/properties", property("Baan Run"), http.StatusCreated)["id"].(string)
		r1, t1 := m.room(t, prop, "101", "Reachable", true, true, nov)
		r2, _ := m.room(t, prop, "102", "Not registered", false, true, nov)
		r3, _ := m.room(t, prop, "103", "No reading", true, false, nov)
		r4, _ := m.room(t, prop, "104", "Billed", true, true, nov)
		r5, _ := m.room(t, prop, "105", "", false, true, nov)
		r6, t6 := m.room(t, prop, "106", "Chat off", true, true, nov)
		m.do(t, "PATCH", "/v1/tenants/"+t6, map[string]any{"chat_enabled": false}, http.StatusOK)
		m.do(t, "POST", "/v1/rooms/"+r1+"/charges", map[string]any{"description": "Internet", "amount": 30000, "recurring": true, "month": nov}, http.StatusCreated)
		billed := m.do(t, "POST", "/v1/bills", map[string]any{"room_id": r4, "month": nov}, http.StatusCreated)
		// Another property's room is no part of the run.
		other := m.do(t, "POST", "/v1/properties", property("Elsewhere"), http.StatusCreated)["id"].(string)
		m.room(t, other, "201", "", false, true, nov)
		created := len(list(t, m.h, m.key, "/v1/events?type=bill.created&limit=100"))
		// Every bill of the run goes to the landlord's endpoints (read
		// once for all of the run's events).
		endpoint := m.do(t, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/run", "enabled_events": []string{"bill.created"}},
			http.StatusCreated)["id"].(string)

		idem := []string{"Idempotency-Key: run-1"}
		body := map[string]any{"month": nov, "notify": true}
		res := m.h.do(req{key: m.key, method: "POST", path: "/v1/properties/" + prop + "/bills", body: body, headers: idem})
		want(t, res, http.StatusOK)
		run := res.data()
		if run["object"] != "bill_run" || run["property_id"] != prop || run["month"] != nov || run["notifications_queued"] != 1.0 {
			t.Fatalf("run %s", res.body)
		}
		bills := ids(run["created"])
		if len(bills) != 4 {
			t.Fatalf("created %v, want the bills of 101, 102, 105 and 106", bills)
		}
		rooms := []string{r1, r2, r5, r6}
		for i, id := range bills {
			b := m.do(t, "GET", "/v1/bills/"+id, nil, http.StatusOK)
			if b["room_id"] != rooms[i] || b["status"] != rental.BillIssued || b["month"] != nov || b["due_date"] != "2026-12-05" {
				t.Fatalf("bill %d: %v", i, b)
			}
		}
		// The same rule as POST /v1/bills: rent, readings and charges.
		b1 := m.do(t, "GET", "/v1/bills/"+bills[0], nil, http.StatusOK)
		if got := lines(b1); !slices.Equal(got, append(lines(billed), "charge:Internet:30000")) || b1["total"] != billed["total"].(float64)+30000 || b1["tenant_id"] != t1 {
			t.Fatalf("room 101's bill: %v total %v; room 104's by POST /v1/bills: %v", got, b1["total"], lines(billed))
		}
		if b5 := m.do(t, "GET", "/v1/bills/"+bills[2], nil, http.StatusOK); b5["tenant_id"] != nil {
			t.Fatalf("the vacant room's bill: %v", b5)
		}
		skipped := run["skipped"].([]any)
		wantSkipped := []map[string]any{{"room_id": r3, "reason": "reading_required"}, {"room_id": r4, "reason": "bill_exists"}}
		if len(skipped) != 2 || skipped[0].(map[string]any)["room_id"] != wantSkipped[0]["room_id"] || skipped[0].(map[string]any)["reason"] != wantSkipped[0]["reason"] ||
			skipped[1].(map[string]any)["room_id"] != wantSkipped[1]["room_id"] || skipped[1].(map[string]any)["reason"] != wantSkipped[1]["reason"] {
			t.Fatalf("skipped %v, want %v", skipped, wantSkipped)
		}
		if n := len(list(t, m.h, m.key, "/v1/events?type=bill.created&limit=100")); n != created+4 {
			t.Fatalf("%d bill.created events after the run, want %d", n, created+4)
		}
		billOf := map[any]any{}
		for _, ev := range list(t, m.h, m.key, "/v1/events?type=bill.created&limit=100") {
			billOf[ev["id"]] = ev["data"].(map[string]any)["object"].(map[string]any)["id"]
		}
		delivered := map[any]bool{}
		for _, d := range list(t, m.h, m.key, "/v1/webhook-endpoints/"+endpoint+"/deliveries?limit=100") {
			delivered[billOf[d["event_id"]]] = true
		}
		for _, id := range bills {
			if !delivered[id] {
				t.Fatalf("bill %s of the run was not delivered to the endpoint: %v", id, delivered)
			}
		}
		notes := list(t, m.h, m.key, "/v1/notifications?limit=100")
		if len(notes) != 1 || notes[0]["type"] != rental.NotifyNewBill || notes[0]["trigger"] != rental.TriggerBillRun ||
			notes[0]["bill_id"] != bills[0] || notes[0]["tenant_id"] != t1 || notes[0]["status"] != rental.NotificationQueued {
			t.Fatalf("notifications %v", notes)
		}

		// A replay answers the same, and makes nothing.
		again := m.h.do(req{key: m.key, method: "POST", path: "/v1/properties/" + prop + "/bills", body: body, headers: idem})
		want(t, again, http.StatusOK)
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(res.body) {
			t.Fatalf("replay %s %s", again.header.Get("Idempotent-Replayed"), again.body)
		}
		// A second run finds every room billed or without a reading.
		second := m.do(t, "POST", "/v1/properties/"+prop+"/bills", body, http.StatusOK)
		if len(second["created"].([]any)) != 0 || len(second["skipped"].([]any)) != 6 || second["notifications_queued"] != 0.0 {
			t.Fatalf("second run %v", second)
		}
		if n := len(list(t, m.h, m.key, "/v1/bills?property_id="+prop+"&limit=100")); n != 5 {
			t.Fatalf("%d bills of the property, want 5", n)
		}
		if n := len(list(t, m.h, m.key, "/v1/notifications?limit=100")); n != 1 {
			t.Fatalf("%d notifications after the second run", n)
		}

		// Drafts, without notices; the month of another property.
		dec := "2026-12"
		m.do(t, "POST", "/v1/meter-readings", map[string]any{"room_id": r1, "month": dec,
			"electricity": map[string]any{"current": 1200}, "water": map[string]any{"current": 110}}, http.StatusCreated)
		drafts := m.do(t, "POST", "/v1/properties/"+prop+"/bills", map[string]any{"month": dec, "issue": false}, http.StatusOK)
		if d := ids(drafts["created"]); len(d) != 1 || m.do(t, "GET", "/v1/bills/"+d[0], nil, http.StatusOK)["status"] != rental.BillDraft {
			t.Fatalf("drafts %v", drafts)
		}
		if w := m.do(t, "GET", "/v1/bills/"+ids(drafts["created"])[0], nil, http.StatusOK)["warnings"]; len(w.([]any)) != 0 {
			t.Fatalf("a draft's warnings %v", w)
		}
	})
}

// Every refusal of a bill run names its field, and writes nothing.
func TestBillRunRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		m := newMonth(t, e)
		prop := m.do(t, "POST", "/v1/properties", property("Baan Run"), http.StatusCreated)["id"].(string)
		m.room(t, prop, "101", "Tenant", true, true, "2026-11")
		theirs := newMonth(t, e)
		foreign := theirs.do(t, "POST", "/v1/properties", property("Theirs"), http.StatusCreated)["id"].(string)
		theirs.room(t, foreign, "101", "Tenant", true, true, "2026-11")
		path := "/v1/properties/" + prop + "/bills"
		for _, tc := range []struct {
			name   string
			path   string
			body   any
			status int
			code   string
			param  string
		}{
			{"no month", path, map[string]any{}, 400, "parameter_missing", "month"},
			{"month not YYYY-MM", path, map[string]any{"month": "2026/11"}, 400, "invalid_parameter", "month"},
			{"month 13", path, map[string]any{"month": "2026-13"}, 400, "invalid_parameter", "month"},
			{"month a number", path, `{"month": 202611}`, 400, "invalid_parameter", "month"},
			{"an unknown field", path, map[string]any{"month": "2026-11", "rooms": []string{"101"}}, 400, "invalid_parameter", "rooms"},
			{"issue null", path, `{"month": "2026-11", "issue": null}`, 400, "invalid_parameter", "issue"},
			{"notify a string", path, map[string]any{"month": "2026-11", "notify": "yes"}, 400, "invalid_parameter", "notify"},
			{"notify drafts", path, map[string]any{"month": "2026-11", "issue": false, "notify": true}, 400, "invalid_parameter", "notify"},
			{"another account's property", "/v1/properties/" + foreign + "/bills", map[string]any{"month": "2026-11"}, 404, "resource_not_found", "property_id"},
			{"no such property", "/v1/properties/prop_000000000000000000000000/bills", map[string]any{"month": "2026-11"}, 404, "resource_not_found", "property_id"},
			{"not an ID", "/v1/properties/x%20y/bills", map[string]any{"month": "2026-11"}, 404, "resource_not_found", ""},
		} {
			res := m.h.do(req{key: m.key, method: "POST", path: tc.path, body: tc.body})
			want(t, res, tc.status, tc.code)
			if got := res.errField("param"); got != tc.param {
				t.Errorf("%s: param %q, want %q", tc.name, got, tc.param)
			}
		}
		readOnly := m.h.testKey(m.h.fixture(rental.PlanEnterprise), rental.ScopeBillsRead, rental.ScopePropertiesRead)
		want(t, m.h.do(req{key: readOnly, method: "POST", path: path, body: map[string]any{"month": "2026-11"}}), http.StatusForbidden, "insufficient_scope")
		for _, k := range []struct {
			m    *month
			prop string
		}{{m, prop}, {theirs, foreign}} {
			if n := len(list(t, k.m.h, k.m.key, "/v1/bills?limit=100&property_id="+k.prop)); n != 0 {
				t.Fatalf("refused runs made %d bills", n)
			}
			if n := len(list(t, k.m.h, k.m.key, "/v1/notifications")); n != 0 {
				t.Fatalf("refused runs queued %d notifications", n)
			}
		}
	})
}

// sendJobs lists the queued send jobs, by their scheduled time.
func sendJobs(t *testing.T, h *harness) []*rivertype.JobRow {
	t.Helper()
	c, err := jobs.New(h.e.DB, slog.New(slog.DiscardHandler), jobs.Options{Secret: h.sec})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.JobList(context.Background(), river.NewJobListParams().Kinds(store.SendArgs{}.Kind()).First(10000))
	if err != nil {
		t.Fatal(err)
	}
	out := res.Jobs
	sort.Slice(out, func(i, j int) bool { return out[i].ScheduledAt.Before(out[j].ScheduledAt) })
	return out
}

// A bill run of 70 notices, over the 60 a minute, is never refused: its
// send jobs are scheduled a second apart from now, no more than 60 in any
// minute. The API's own sends meanwhile are a budget of their own: they
// go at once (not behind the run's queue) and are refused only past
// their own 60 a minute; a second run's notices queue after the first's.
func TestBillRunPacing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		m := newMonth(t, e)
		acct := m.h.fixture(rental.PlanEnterprise)
		m.key = m.h.testKey(acct)
		sandbox := acct.Sandbox(t, e.DB)
		prop := m.do(t, "POST", "/v1/properties", property("Baan Seventy"), http.StatusCreated)["id"].(string)
		const n = 70
		// Rooms, tenants registered with the chat and readings, made in
		// one transaction through the store: the run is what is tested.
		err := e.DB.InTx(t.Context(), func(tx *store.Tx) error {
			for i := range n + 1 {
				r, err := rental.NewRoom(prop, rental.RoomChange{Number: rental.Of(itoa(int64(1000 + i))), MonthlyRent: rental.Of[int64](350000)})
				if err != nil {
					return err
				}
				room, err := tx.CreateRoom(t.Context(), sandbox, r)
				if err != nil {
					return err
				}
				tn, err := rental.NewTenant(rental.TenantChange{Name: rental.Of("Tenant " + itoa(int64(i))), Phone: rental.Of("0812345678")}, rental.Time{Time: tx.Now})
				if err != nil {
					return err
				}
				tenant, err := tx.MoveIn(t.Context(), sandbox, room.ID, tn)
				if err != nil {
					return err
				}
				if _, err := tx.RegisterLine(t.Context(), sandbox, tenant.ID, ""); err != nil {
					return err
				}
				month := "2026-11"
				if i == n {
					month = "2026-12" // the second run's
				}
				in := store.ReadingInput{RoomID: room.ID, Month: month, Electricity: rental.PartInput{Set: true, Current: rental.Of(rental.Quantity(100_000))},
					Water: rental.PartInput{Set: true, Current: rental.Of(rental.Quantity(5_000))}}
				if _, err := tx.CreateReading(t.Context(), sandbox, in); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The API's budget used up first: the run is not refused for it.
		tenants := list(t, m.h, m.key, "/v1/tenants?limit=1")
		message := func(idem string) *result {
			return m.h.do(req{key: m.key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenants[0]["id"], "text": "hello"},
				headers: []string{"Idempotency-Key: " + idem}})
		}
		for i := range 60 {
			want(t, message("m"+itoa(int64(i))), http.StatusAccepted)
		}
		want(t, message("m60"), http.StatusTooManyRequests, "sending_limit")
		before := len(sendJobs(t, m.h))

		run := m.do(t, "POST", "/v1/properties/"+prop+"/bills", map[string]any{"month": "2026-11", "notify": true}, http.StatusOK)
		if run["notifications_queued"] != float64(n) {
			t.Fatalf("run %v", run)
		}
		paced := sendJobs(t, m.h)[before:]
		if len(paced) != n {
			t.Fatalf("%d send jobs for %d notices", len(paced), n)
		}
		for i := 60; i < len(paced); i++ {
			if d := paced[i].ScheduledAt.Sub(paced[i-60].ScheduledAt); d < time.Minute {
				t.Fatalf("send jobs %d and %d are %v apart: over 60 a minute", i-60, i, d)
			}
		}
		if span := paced[n-1].ScheduledAt.Sub(paced[0].ScheduledAt); span < (n-1)*time.Second || span > (n-1)*time.Second+time.Second {
			t.Fatalf("%d notices spread over %v, want a second apart", n, span)
		}

		// The API's sends are their own budget: refused past their 60
		// still, then, a minute on, sent at once, not after the queue.
		want(t, message("m61"), http.StatusTooManyRequests, "sending_limit")
		e.Clock.Advance(time.Minute)
		res := message("m62")
		want(t, res, http.StatusAccepted)
		if res.data()["trigger"] != rental.TriggerAPI {
			t.Fatalf("an API send: %v", res.data())
		}
		var mine *rivertype.JobRow
		for _, j := range sendJobs(t, m.h) {
			var args store.SendArgs
			if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
				t.Fatal(err)
			}
			if args.NotificationID == res.data()["id"] {
				mine = j
			}
		}
		if mine == nil || !mine.ScheduledAt.Before(paced[n-1].ScheduledAt) || mine.ScheduledAt.After(e.Clock.Now().Add(time.Second)) {
			t.Fatalf("the API's send is scheduled at %v; the run's queue ends at %v", mine.ScheduledAt, paced[n-1].ScheduledAt)
		}
		// A second run queues after the first's last slot.
		second := m.do(t, "POST", "/v1/properties/"+prop+"/bills", map[string]any{"month": "2026-12", "notify": true}, http.StatusOK)
		if second["notifications_queued"] != 1.0 {
			t.Fatalf("second run %v", second)
		}
		last := sendJobs(t, m.h)
		if got := last[len(last)-1].ScheduledAt; got.Sub(paced[n-1].ScheduledAt) < time.Second {
			t.Fatalf("the second run's notice at %v, the first's last at %v", got, paced[n-1].ScheduledAt)
		}
		// The sandbox's clock moved past their slots sends them all
		// before the advance answers.
		advance(t, m.h, m.key, 1)
		for _, nt := range list(t, m.h, m.key, "/v1/notifications?limit=100") {
			if nt["trigger"] == rental.TriggerBillRun && nt["status"] != rental.NotificationSent {
				t.Fatalf("a bill run's notice after the clock passed its slot: %v", nt)
			}
		}
		if sent := len(list(t, m.h, m.key, "/v1/notifications?status=sent&limit=100")); sent != 100 {
			t.Fatalf("%d notifications sent of the first page", sent)
		}
	})
}
