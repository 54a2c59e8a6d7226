package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime/pprof"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store/storetest"
)

// benchEach runs a benchmark on SQLite, and on PostgreSQL when
// RENTAPI_TEST_POSTGRES is set.
func benchEach(b *testing.B, run func(*testing.B, storetest.Engine)) {
	b.Run("sqlite", func(b *testing.B) { run(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			b.Skip(storetest.PostgresEnv + " not set")
		}
		run(b, storetest.Postgres(b))
	})
}

// benchServer starts the API alone (no pages) over e, with cfg's other
// settings and no rate limits: a benchmark measures the service, not its
// limits. It returns the server and its secret. With -cpuprofile, each
// request runs under the profiler label "route", its method and path with
// IDs as {id}, so that a benchmark's CPU profile tells its requests apart
// from the set-up it made over HTTP:
//
//	go tool pprof -tagfocus 'route=POST /v1/properties/{id}/bills' api.test cpu.prof
func benchServer(b *testing.B, e storetest.Engine, cfg api.Config) (*httptest.Server, *secret.Secret) {
	hs := httptest.NewUnstartedServer(nil)
	b.Cleanup(hs.Close)
	cfg.DB, cfg.Secret, cfg.PublicURL, cfg.NoRateLimits = e.DB, storetest.Secret(b), "http://"+hs.Listener.Addr().String(), true
	srv, err := api.NewServer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	hs.Config.Handler = srv
	// Labelled only when profiled: the label costs each request a
	// little, which benchmarks measured before it did not pay.
	if f := flag.Lookup("test.cpuprofile"); f != nil && f.Value.String() != "" {
		hs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route := r.Method + " " + benchIDs.ReplaceAllString(r.URL.Path, "{id}")
			pprof.Do(r.Context(), pprof.Labels("route", route), func(ctx context.Context) { srv.ServeHTTP(w, r.WithContext(ctx)) })
		})
	}
	hs.Start()
	return hs, cfg.Secret
}

// billsPage seeds what the read benchmarks page through: an application on
// the enterprise plan linked to a pro landlord with 20 issued bills, the
// page GET /v1/bills?limit=20 answers.
func billsPage(b *testing.B, e storetest.Engine) (storetest.Fixture, *rental.Account) {
	f := storetest.NewFixture(b, e.DB, rental.PlanEnterprise)
	acct := f.LinkLandlord(b, e.DB, rental.LandlordPro, f.App.Scopes)
	storetest.IssuedBills(b, e.DB, acct, rental.PropertyChange{ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)}, "2026-10", 20)
	return f, acct
}

// benchIDs matches the IDs in a path.
var benchIDs = regexp.MustCompile(`[a-z]+_[a-z0-9]{24}`)

// benchPost posts body as JSON to the server at url with key, and an
// Idempotency-Key of its own, and returns the answer's status and body.
func benchPost(url, key, path string, body any) (int, []byte, error) {
	raw, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(raw))
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", rental.NewID("idem"))
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// benchPostAs is benchPost that fails b unless the answer's status is
// status, and returns its body.
func benchPostAs(b *testing.B, url, key, path string, body any, status int) []byte {
	b.Helper()
	got, out, err := benchPost(url, key, path, body)
	if err != nil || got != status {
		b.Fatalf("%s: %d %s %v", path, got, out, err)
	}
	return out
}

// dataID is the ID of the object an answer's "data" holds.
func dataID(body []byte) string {
	var out struct{ Data struct{ ID string } }
	json.Unmarshal(body, &out)
	return out.Data.ID
}
