package rentapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	rentapi "rentapi/sdk/go"
	"rentapi/sdk/go/webhook"
)

// receiver is a developer's webhook handler: it verifies each delivery
// with the SDK and keeps the events, or answers 400 to one it refuses.
type receiver struct {
	t       *testing.T
	mu      sync.Mutex
	secrets []string
	events  []*rentapi.Event
	refused []error
}

func newReceiver(t *testing.T) (*receiver, string) {
	r := &receiver{t: t}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL + "/hook"
}

func (r *receiver) setSecrets(s ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = s
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		e, err := webhook.ConstructEvent(body, req.Header, s)
		if err != nil {
			r.refused = append(r.refused, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if s == r.secrets[len(r.secrets)-1] {
			r.events = append(r.events, e)
		}
	}
}

// waitFor waits until an event satisfies ok, and returns the events
// received by then.
func (r *receiver) waitFor(ok func(*rentapi.Event) bool) []*rentapi.Event {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		events, refused := slices.Clone(r.events), slices.Clone(r.refused)
		r.mu.Unlock()
		if len(refused) > 0 {
			r.t.Fatalf("deliveries refused: %v", refused)
		}
		if slices.ContainsFunc(events, ok) {
			return events
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatal("the event did not arrive in 30 s")
	return nil
}

// A real endpoint's deliveries verify with the SDK, with the secret the
// endpoint was made with, and after a rotation with the old and the new
// secret alike.
func TestWebhookDeliveriesVerify(t *testing.T) {
	ctx := t.Context()
	c := client()
	recv, url := newReceiver(t)
	ep, err := c.CreateWebhookEndpoint(ctx, &rentapi.WebhookEndpointCreate{URL: url, EnabledEvents: []rentapi.EnabledEvent{rentapi.EnabledEventPropertyCreated}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.DeleteWebhookEndpoint(ctx, ep.ID) })
	recv.setSecrets(*ep.Secret)
	p, err := c.CreateProperty(ctx, &rentapi.PropertyCreate{Name: uniqueName(t), ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))})
	if err != nil {
		t.Fatal(err)
	}
	about := func(id string) func(*rentapi.Event) bool {
		return func(e *rentapi.Event) bool {
			var obj struct{ ID string }
			return json.Unmarshal(e.Data.Object, &obj) == nil && obj.ID == id
		}
	}
	events := recv.waitFor(about(p.ID))
	var got rentapi.Property
	e := events[slices.IndexFunc(events, about(p.ID))]
	if err := json.Unmarshal(e.Data.Object, &got); err != nil || e.Type != "property.created" || got.Name != p.Name {
		t.Fatalf("%s %+v %v", e.Type, got, err)
	}

	rotated, err := c.RotateWebhookSecret(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	recv.setSecrets(*ep.Secret, *rotated.Secret) // each must verify the delivery
	p2, err := c.CreateProperty(ctx, &rentapi.PropertyCreate{Name: uniqueName(t), ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))})
	if err != nil {
		t.Fatal(err)
	}
	recv.waitFor(about(p2.ID))
}

// rentapi listen forwards the account's events to a local receiver as
// signed deliveries, in the stream's order: a receiver verifying with the
// SDK and the session's secret gets every event of a reading, its bill and
// the bill's payment, none skipped or repeated.
func TestListenForwardsSignedEvents(t *testing.T) {
	ctx := t.Context()
	c := client()
	recv, url := newReceiver(t)
	listen := exec.CommandContext(ctx, bin, "listen", "--api-key", testKey, "--api-base", baseURL, "--forward-to", url)
	out, _ := listen.StdoutPipe()
	listen.Stderr = serverLog
	if err := listen.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listen.Process.Kill(); listen.Wait() })
	secret := regexp.MustCompile(`signing secret for this session: (whsec_\S+)`)
	ready := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := secret.FindStringSubmatch(lines.Text()); m != nil {
				recv.setSecrets(m[1])
			}
			if regexp.MustCompile(`ready: streaming`).MatchString(lines.Text()) {
				close(ready)
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("listen was not ready in 30 s")
	}
	start := time.Now().Add(-2 * time.Second)

	p, err := c.CreateProperty(ctx, &rentapi.PropertyCreate{Name: uniqueName(t), ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))})
	if err != nil {
		t.Fatal(err)
	}
	room, err := c.CreateRoom(ctx, p.ID, &rentapi.RoomCreate{Number: "L1", MonthlyRent: 300000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MoveInTenant(ctx, room.ID, &rentapi.TenantCreate{Name: "Listen Tenant", Phone: "0899999999"}); err != nil {
		t.Fatal(err)
	}
	month := time.Now().In(time.FixedZone("ICT", 7*3600)).Format("2006-01")
	if _, err := c.CreateMeterReading(ctx, &rentapi.MeterReadingCreate{RoomID: room.ID, Month: month,
		Electricity: rentapi.MeterPartInput{Previous: rentapi.Ptr(10.0), Current: 20}, Water: rentapi.MeterPartInput{Previous: rentapi.Ptr(1.0), Current: 2}}); err != nil {
		t.Fatal(err)
	}
	bill, err := c.CreateBill(ctx, &rentapi.BillCreate{RoomID: room.ID, Month: month})
	if err != nil {
		t.Fatal(err)
	}
	pay, err := c.SimulatePayment(ctx, &rentapi.PaymentSimulation{BillID: bill.ID, Outcome: rentapi.PaymentSimulationOutcomePaid})
	if err != nil {
		t.Fatal(err)
	}
	got := recv.waitFor(func(e *rentapi.Event) bool {
		var obj struct{ ID string }
		return e.Type == "payment.paid" && json.Unmarshal(e.Data.Object, &obj) == nil && obj.ID == pay.ID
	})

	// The events the service recorded since just before: what listen
	// forwarded is a run of them, in their order.
	var stored []string
	for e, err := range c.ListEvents(ctx, &rentapi.ListEventsParams{Order: rentapi.OrderAsc, CreatedAfter: start, Limit: 100}) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, e.ID)
	}
	var forwarded []string
	var types []string
	for _, e := range got {
		forwarded = append(forwarded, e.ID)
		types = append(types, e.Type)
	}
	at := slices.Index(stored, forwarded[0])
	if at < 0 || at+len(forwarded) > len(stored) || !slices.Equal(stored[at:at+len(forwarded)], forwarded) {
		t.Fatalf("forwarded %v\nstored %v", forwarded, stored)
	}
	want := []string{"property.created", "room.created", "tenant.created", "meter.reading.created", "bill.created", "payment.paid"}
	i := 0
	for _, typ := range types {
		if i < len(want) && typ == want[i] {
			i++
		}
	}
	if i != len(want) {
		t.Fatalf("forwarded types %v, want %v among them in order", types, want)
	}
}
