package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"rentapi/internal/api"
	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
	"rentapi/internal/webhook/webhooktest"
)

// The payment provider every test server takes confirmations from.
const (
	testProvider       = "kbank"
	testProviderSecret = "prov_secret_for_tests_0123456789"
)

// contractDoc is the OpenAPI document loaded and checked once for all
// tests.
var contractDoc = sync.OnceValues(func() (*openapi3.T, error) {
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

// contract is the router of contractDoc's operations.
var contract = sync.OnceValues(func() (routers.Router, error) {
	doc, err := contractDoc()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// harness is a real API server over a real database, with a client whose
// every exchange is checked against the OpenAPI document.
type harness struct {
	t   *testing.T
	e   storetest.Engine
	sec *secret.Secret
	srv *api.Server
	url string
	// jobs runs the background jobs, in a webhookHarness only.
	jobs *jobs.Client
}

func newHarness(t *testing.T, e storetest.Engine, opts ...func(*api.Config)) *harness {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	cfg := api.Config{DB: e.DB, Secret: storetest.Secret(t), PublicURL: "http://" + hs.Listener.Addr().String(),
		Providers: map[string]string{testProvider: testProviderSecret}}
	if os.Getenv("RENTAPI_TEST_LOG") != "" { // the server's log, to debug a failing test
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Guard.Resolver == nil { // no test asks real DNS
		cfg.Guard.Resolver = webhooktest.Internet(t)
	}
	srv, err := api.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: e.DB, Log: cfg.Log, Guard: cfg.Guard}, srv)
	hs.Start()
	return &harness{t: t, e: e, sec: cfg.Secret, srv: srv, url: hs.URL}
}

// fixture makes a developer on the plan with one application.
func (h *harness) fixture(plan rental.DeveloperPlan) storetest.Fixture {
	return storetest.NewFixture(h.t, h.e.DB, plan)
}

// testKey makes a test key of the application with the scopes (all when none).
func (h *harness) testKey(f storetest.Fixture, scopes ...rental.Scope) string {
	return f.Key(h.t, h.e.DB, h.sec, store.NewKey{Mode: rental.ModeTest, Scopes: scopesOrNil(scopes)})
}

// liveKey makes a live key, bound to account when it is not empty.
func (h *harness) liveKey(f storetest.Fixture, account string, scopes ...rental.Scope) string {
	return f.Key(h.t, h.e.DB, h.sec, store.NewKey{Mode: rental.ModeLive, AccountID: account, Scopes: scopesOrNil(scopes)})
}

func scopesOrNil(s []rental.Scope) rental.Scopes {
	if len(s) == 0 {
		return nil
	}
	return rental.Scopes(s)
}

// req describes one request: headers are "Name: value" strings.
type req struct {
	key     string
	method  string
	path    string
	body    any // a string or []byte is sent as is; anything else as JSON
	headers []string
}

// result is a response, read in full.
type result struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r *result) json() map[string]any {
	var m map[string]any
	json.Unmarshal(r.body, &m)
	return m
}

// data returns the "data" object of a single-object response.
func (r *result) data() map[string]any {
	d, _ := r.json()["data"].(map[string]any)
	return d
}

// code returns error.code of an error response.
func (r *result) code() string {
	e, _ := r.json()["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r *result) errField(name string) string {
	e, _ := r.json()["error"].(map[string]any)
	v, _ := e[name].(string)
	return v
}

// do sends the request and checks the exchange against the contract: the
// response always (for documented routes), the request when the server
// accepted it (a request the server takes must be one the document allows).
func (h *harness) do(rq req) *result {
	h.t.Helper()
	res, err := h.send(rq)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// send is do without failing the test on a transport error, for use from
// other goroutines.
func (h *harness) send(rq req) (*result, error) {
	var body []byte
	switch b := rq.body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		body, _ = json.Marshal(b)
	}
	build := func() *http.Request {
		r, _ := http.NewRequest(rq.method, h.url+rq.path, bytes.NewReader(body))
		if body != nil {
			r.Header.Set("Content-Type", "application/json")
		}
		if rq.key != "" {
			r.Header.Set("Authorization", "Bearer "+rq.key)
		}
		for _, hv := range rq.headers {
			name, value, _ := strings.Cut(hv, ":")
			if value = strings.TrimSpace(value); value == "" {
				r.Header.Del(name)
			} else {
				r.Header.Set(name, value)
			}
		}
		return r
	}
	resp, err := http.DefaultClient.Do(build())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	res := &result{status: resp.StatusCode, header: resp.Header, body: rb}
	if err := checkContract(build(), res); err != nil {
		return res, fmt.Errorf("%s %s → %d %s: %w", rq.method, rq.path, res.status, rb, err)
	}
	return res, nil
}

// checkContract validates one exchange against the OpenAPI document.
func checkContract(r *http.Request, res *result) error {
	router, err := contract()
	if err != nil {
		return fmt.Errorf("openapi.yaml: %w", err)
	}
	if res.header.Get("X-Request-ID") == "" {
		return fmt.Errorf("no X-Request-ID")
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		if strings.HasPrefix(r.URL.Path, "/line/") {
			return nil // LINE's webhook speaks LINE's format, no part of the document
		}
		if res.status == http.StatusNotFound || res.status == http.StatusMethodNotAllowed || res.code() == "api_key_in_query" {
			return nil // an undocumented route, answered as such (a key in the URL is refused before routing)
		}
		return fmt.Errorf("route not in the document: %w", err)
	}
	// The request's body is read (as the validator would) only when the
	// request is validated: some callers pass one already sent.
	var reqBody []byte
	if r.Body != nil && res.status < 300 {
		if reqBody, err = io.ReadAll(r.Body); err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	key := exchangeKey(r, reqBody, res)
	_, seen := validated.Load(key)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if res.status < 300 && !seen {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("the server accepted a request the document does not allow: %w", err)
		}
	}
	if err := checkResponse(in, res, seen); err != nil {
		return fmt.Errorf("response does not match the document: %w", err)
	}
	validated.Store(key, true)
	return nil
}

// checkResponse validates the answer as kin-openapi's ValidateResponse
// does: its status documented (or a default), each documented header, and
// the body against the schema of its media type (not again when bodySeen).
// It does so itself for JSON, with each schema compiled once
// (compiledSchema): kin-openapi compiles a schema anew for every value it
// validates, which was a third of this package's CPU. Other media types
// go to kin-openapi.
func checkResponse(in *openapi3filter.RequestValidationInput, res *result, bodySeen bool) error {
	if in.Request.Method == http.MethodHead {
		return nil
	}
	switch res.status {
	case http.StatusNotModified, http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return nil
	}
	responses := in.Route.Operation.Responses
	if responses.Len() == 0 {
		return nil
	}
	ref := responses.Status(res.status)
	if ref == nil {
		ref = responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("status %d is not in the document", res.status)
	}
	for _, name := range slices.Sorted(maps.Keys(ref.Value.Headers)) {
		if http.CanonicalHeaderKey(name) != "Content-Type" {
			if err := checkHeader(name, ref.Value.Headers[name].Value, res.header); err != nil {
				return err
			}
		}
	}
	if bodySeen || len(ref.Value.Content) == 0 {
		return nil
	}
	ct := res.header.Get("Content-Type")
	media := ref.Value.Content.Get(ct)
	if media == nil {
		return fmt.Errorf("content type %q is not in the document", ct)
	}
	if media.Schema == nil {
		return nil
	}
	if mime, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(mime) != "application/json" {
		return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: res.status, Header: res.header, Body: io.NopCloser(bytes.NewReader(res.body)), Options: in.Options})
	}
	sch, err := compiledSchema(media.Schema)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.body))
	if err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("the body does not match its schema: %w", err)
	}
	return nil
}

// checkHeader validates a documented header of an answer as kin-openapi
// does: a required one present and not empty, and a present one's value,
// decoded as its schema's type, valid against the schema.
func checkHeader(name string, h *openapi3.Header, got http.Header) error {
	raw := got.Get(name)
	if raw == "" {
		if h.Required {
			return fmt.Errorf("header %s is missing", name)
		}
		return nil
	}
	if h.Schema == nil {
		return nil
	}
	var v any
	switch {
	case h.Schema.Value.Type.Is("string"):
		v = raw
	case h.Schema.Value.Type.Is("integer"):
		if _, err := strconv.ParseInt(raw, 10, 64); err != nil {
			return fmt.Errorf("header %s: %q is not an integer", name, raw)
		}
		v = json.Number(raw)
	default:
		return fmt.Errorf("header %s: the harness does not decode a header of type %v", name, h.Schema.Value.Type)
	}
	sch, err := compiledSchema(h.Schema)
	if err != nil {
		return err
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("header %s: %w", name, err)
	}
	return nil
}

// schemas are the document's schemas of bodies and headers, each compiled
// once into a JSON Schema 2020-12 validator.
var schemas struct {
	sync.Mutex
	c        *jsonschema.Compiler
	compiled map[*openapi3.SchemaRef]*jsonschema.Schema
}

// docURL is where the compiler keeps the document, which the schemas'
// references ("#/components/…") point into.
const docURL = "https://rentapi.test/openapi.json"

// compiledSchema compiles the schema once, with the document it refers
// into loaded once: JSON Schema 2020-12, as kin-openapi validates an
// OpenAPI 3.1 document, with the formats kin-openapi asserts that the
// document uses (date, date-time, int32, int64) asserted too, and the
// others (email, uri) as JSON Schema defines them.
func compiledSchema(schema *openapi3.SchemaRef) (*jsonschema.Schema, error) {
	schemas.Lock()
	defer schemas.Unlock()
	if sch, ok := schemas.compiled[schema]; ok {
		return sch, nil
	}
	if schemas.c == nil {
		doc, err := contractDoc()
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		whole, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		for _, f := range []struct {
			name     string
			min, max float64
		}{{"int32", math.MinInt32, math.MaxInt32}, {"int64", math.MinInt64, math.MaxInt64}} {
			c.RegisterFormat(&jsonschema.Format{Name: f.name, Validate: func(v any) error {
				n, ok := v.(json.Number)
				if !ok {
					return nil
				}
				if x, err := n.Float64(); err != nil || x < f.min || x > f.max {
					return fmt.Errorf("%s is out of the range of %s", n, f.name)
				}
				return nil
			}})
		}
		if err := c.AddResource(docURL, whole); err != nil {
			return nil, err
		}
		schemas.c, schemas.compiled = c, map[*openapi3.SchemaRef]*jsonschema.Schema{}
	}
	// The schema as kin-openapi marshals it ({"$ref": "#/components/…"}
	// or inline with such references), its references made to point into
	// the document.
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(`"$ref":"#/`), []byte(`"$ref":"`+docURL+`#/`))
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	loc := fmt.Sprintf("https://rentapi.test/body/%d.json", len(schemas.compiled))
	if err := schemas.c.AddResource(loc, v); err != nil {
		return nil, err
	}
	sch, err := schemas.c.Compile(loc)
	if err != nil {
		return nil, err
	}
	schemas.compiled[schema] = sch
	return sch, nil
}

// validated holds the exchanges checkContract has validated in full, by
// exchangeKey. kin-openapi compiles every request schema it meets anew,
// and tests that send the same request many times (quotas, limits) spent
// much of their time validating identical bytes again: for an exchange
// whose request and answer body are ones validated before, the request
// and the body are not validated again (the result is a function of
// them), while the status and headers always are.
var validated sync.Map

// exchangeKey is a hash of everything checkContract's request and body
// validation read: the request's method, URI, headers and body (when it
// is validated), and the answer's status, type and body.
func exchangeKey(r *http.Request, reqBody []byte, res *result) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.RequestURI())
	r.Header.WriteSubset(h, nil) // sorted by name
	fmt.Fprintf(h, "%d\n", len(reqBody))
	h.Write(reqBody)
	fmt.Fprintf(h, "%d %q %d\n", res.status, res.header.Get("Content-Type"), len(res.body))
	h.Write(res.body)
	return [sha256.Size]byte(h.Sum(nil))
}

// want fails the test unless the response has the status (and error code,
// when given).
func want(t *testing.T, res *result, status int, code ...string) {
	t.Helper()
	if res.status != status || (len(code) > 0 && res.code() != code[0]) {
		t.Fatalf("got %d %s; want %d %v", res.status, res.body, status, code)
	}
}

// property is a valid create body.
func property(name string) map[string]any {
	return map[string]any{"name": name, "address": "99 Soi Sukhumvit 71, Bangkok", "electricity_rate": 800, "water_rate": 1800, "due_day": 5}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
