package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// The router and the document describe the same routes: a registered route
// missing from the document fails, and so does a documented one that is not
// served.
func TestRoutesMatchDocument(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "post", "put", "patch", "delete":
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	served := h.srv.Routes()
	slices.Sort(documented)
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("served but not documented: %s", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			t.Errorf("documented but not served: %s", r)
		}
	}
	// Every operation has an operationId, and each /v1 one documents the
	// error statuses every API request can meet.
	for path, ops := range doc.Paths {
		for method, op := range ops {
			m, ok := op.(map[string]any)
			if !ok {
				continue
			}
			if m["operationId"] == nil {
				t.Errorf("%s %s has no operationId", method, path)
			}
			if !strings.HasPrefix(path, "/v1/") {
				continue
			}
			responses, _ := m["responses"].(map[string]any)
			for _, status := range []string{"400", "401", "403", "429", "431", "500", "503"} {
				if responses[status] == nil {
					t.Errorf("%s %s does not document %s", method, path, status)
				}
			}
		}
	}
}

// The document's header parameters say what the server enforces, and give
// no example a generated client would send as is: the idempotency key is at
// most 255 printable ASCII characters, and SERVICE-Account has no example (an
// account ID is only ever another application's).
func TestHeaderParameters(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Parameters map[string]struct {
				Example any `yaml:"example"`
				Schema  struct {
					MinLength int    `yaml:"minLength"`
					MaxLength int    `yaml:"maxLength"`
					Pattern   string `yaml:"pattern"`
				} `yaml:"schema"`
			} `yaml:"parameters"`
		} `yaml:"components"`
	}
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ik := doc.Components.Parameters["IdempotencyKey"].Schema
	if ik.MinLength != 1 || ik.MaxLength != 255 || ik.Pattern != "^[ -~]+$" {
		t.Errorf("Idempotency-Key schema %+v", ik)
	}
	if ex := doc.Components.Parameters["ServiceAccount"].Example; ex != nil {
		t.Errorf("SERVICE-Account has the example %v", ex)
	}
}

// The document is served in both forms, and they are the same document.
func TestServedDocument(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	js := h.do(req{method: "GET", path: "/openapi.json"})
	ym := h.do(req{method: "GET", path: "/openapi.yaml"})
	want(t, js, http.StatusOK)
	want(t, ym, http.StatusOK)
	if !strings.HasPrefix(js.header.Get("Content-Type"), "application/json") || !strings.HasPrefix(ym.header.Get("Content-Type"), "application/yaml") {
		t.Fatalf("content types %q %q", js.header.Get("Content-Type"), ym.header.Get("Content-Type"))
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(js.body, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(ym.body, &fromYAML); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if string(a) != string(b) {
		t.Fatal("openapi.json and openapi.yaml differ")
	}
	if v := fromJSON.(map[string]any)["openapi"]; !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(v.(string)) {
		t.Fatalf("openapi version %v", v)
	}
	// The JSON keeps the document's own key order.
	if !strings.HasPrefix(string(js.body), `{"openapi":`) {
		t.Fatalf("JSON starts %q", js.body[:40])
	}
	want(t, h.do(req{method: "GET", path: "/healthz"}), http.StatusOK)
	want(t, h.do(req{method: "GET", path: "/readyz"}), http.StatusOK)
}

// Every number and integer in the document says its format, so that a
// generated client holds each in a type wide enough: a number without one
// is a float32 in oapi-codegen's Go, which sends 98765.432 as 98765.43.
func TestDocumentNumbersHaveFormats(t *testing.T) {
	t.Parallel()
	var doc any
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	formats := map[string][]string{"number": {"double"}, "integer": {"int64", "int32"}}
	seen := 0
	var walk func(n any, path string)
	walk = func(n any, path string) {
		switch n := n.(type) {
		case map[string]any:
			var types []string
			switch tv := n["type"].(type) {
			case string:
				types = []string{tv}
			case []any:
				for _, x := range tv {
					if s, ok := x.(string); ok {
						types = append(types, s)
					}
				}
			}
			for _, typ := range types {
				if want, ok := formats[typ]; ok {
					seen++
					if f, _ := n["format"].(string); !slices.Contains(want, f) {
						t.Errorf("%s: type %s has format %q, want one of %v", path, typ, f, want)
					}
				}
			}
			for k, v := range n {
				walk(v, path+"/"+k)
			}
		case []any:
			for i, v := range n {
				walk(v, path+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")
	if seen < 50 {
		t.Fatalf("only %d numbers and integers found: is the walk reading the document?", seen)
	}
}

// The document's maximum meter value is the server's: a reading of exactly
// it is recorded and read back digit for digit, one a thousandth above it
// is 400 invalid_parameter naming the field, as is one with a fourth
// decimal. Every meter value in the document has that same maximum.
func TestMeterMaximumAgrees(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Maximum    *float64 `yaml:"maximum"`
				Properties map[string]struct {
					Maximum *float64 `yaml:"maximum"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas
	maxima := map[string]*float64{
		"Quantity":                 s["Quantity"].Maximum,
		"Meter.last_value":         s["Meter"].Properties["last_value"].Maximum,
		"MeterPartInput.current":   s["MeterPartInput"].Properties["current"].Maximum,
		"MeterPartInput.previous":  s["MeterPartInput"].Properties["previous"].Maximum,
		"MeterPartUpdate.current":  s["MeterPartUpdate"].Properties["current"].Maximum,
		"MeterPartUpdate.previous": s["MeterPartUpdate"].Properties["previous"].Maximum,
	}
	top := maxima["MeterPartInput.current"]
	if top == nil {
		t.Fatal("MeterPartInput.current has no maximum")
	}
	for name, m := range maxima {
		if m == nil || *m != *top {
			t.Errorf("%s's maximum is %v, MeterPartInput.current's %v", name, m, *top)
		}
	}
	max := strconv.FormatFloat(*top, 'f', -1, 64)
	above := strconv.FormatFloat(*top+0.001, 'f', 3, 64)
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanPro))
		prop := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Max")})
		want(t, prop, http.StatusCreated)
		room := h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop.data()["id"].(string) + "/rooms", body: map[string]any{"number": "1", "monthly_rent": 100000}})
		want(t, room, http.StatusCreated)
		roomID := room.data()["id"].(string)
		reading := func(month, elec, water string) *result {
			return h.do(req{key: key, method: "POST", path: "/v1/meter-readings",
				body: `{"room_id":"` + roomID + `","month":"` + month + `","electricity":{"current":` + elec + `},"water":{"previous":0,"current":` + water + `}}`})
		}
		for _, v := range []string{above, max + "1", "10000000", "1e7"} {
			res := reading("2026-10", v, "1")
			want(t, res, http.StatusBadRequest, "invalid_parameter")
			if res.errField("param") != "electricity.current" {
				t.Errorf("%s: param %q", v, res.errField("param"))
			}
		}
		res := reading("2026-10", max, "98765.432")
		want(t, res, http.StatusCreated)
		if !strings.Contains(string(res.body), `"current":`+max+`,`) || !strings.Contains(string(res.body), `"current":98765.432,`) {
			t.Fatalf("reading %s", res.body)
		}
		meter := h.do(req{key: key, method: "GET", path: "/v1/meters?kind=electricity&room_id=" + roomID})
		want(t, meter, http.StatusOK)
		if !strings.Contains(string(meter.body), `"last_value":`+max+`,`) {
			t.Fatalf("meter %s", meter.body)
		}
	})
}

// The harness's contract check fails an answer off the document (a field
// of the wrong type, a required one missing, a time that is no date-time,
// an unknown enum value, a number out of int32; a header that is no
// integer or is out of range, a required header missing; a status or a
// content type the operation does not have), and passes the real one.
func TestContractCheckCatchesAnAnswerOffTheDocument(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanPro))
	created := h.do(req{method: "POST", path: "/v1/properties", key: key, body: property("Baan Suk")})
	want(t, created, http.StatusCreated)
	path := "/v1/properties/" + created.data()["id"].(string)
	got := h.do(req{method: "GET", path: path, key: key})
	want(t, got, http.StatusOK)
	exchange := func(status int, header http.Header, body map[string]any) error {
		r, _ := http.NewRequest("GET", h.url+path, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		b, _ := json.Marshal(body)
		return checkContract(r, &result{status: status, header: header, body: b})
	}
	if err := exchange(got.status, got.header, got.json()); err != nil {
		t.Fatalf("the real answer: %v", err)
	}
	for name, change := range map[string]func(d map[string]any){
		"a rate as a string":    func(d map[string]any) { d["electricity_rate"] = "eight" },
		"no id":                 func(d map[string]any) { delete(d, "id") },
		"a time that is a date": func(d map[string]any) { d["created_at"] = "2026-11-28" },
		"an unknown object":     func(d map[string]any) { d["object"] = "room" },
		"a rate over int32":     func(d map[string]any) { d["electricity_rate"] = float64(1 << 40) },
	} {
		body := got.json()
		change(body["data"].(map[string]any))
		if err := exchange(got.status, got.header, body); err == nil {
			t.Errorf("%s: the contract check passed %v", name, body["data"])
		}
	}
	for name, change := range map[string]func(h http.Header) int{
		"a limit that is no integer":  func(h http.Header) int { h.Set("X-RateLimit-Limit", "lots"); return 200 },
		"a remaining under zero":      func(h http.Header) int { h.Set("X-RateLimit-Remaining", "-1"); return 200 },
		"a mode of neither":           func(h http.Header) int { h.Set("X-SERVICE-Mode", "demo"); return 200 },
		"no request ID":               func(h http.Header) int { h.Del("X-Request-ID"); return 200 },
		"a status it does not answer": func(h http.Header) int { return http.StatusTeapot },
		"a page":                      func(h http.Header) int { h.Set("Content-Type", "text/html"); return 200 },
	} {
		header := got.header.Clone()
		status := change(header)
		if err := exchange(status, header, got.json()); err == nil {
			t.Errorf("%s: the contract check passed %d %v", name, status, header)
		}
	}
}

// The document's PropertyCreate says what the server decides about water:
// metered (the default) needs water_rate and no flat amount, a flat
// billing needs water_flat_amount. A generator that builds bodies from the
// schema gets a 201 for each body the schema allows and a 400 naming the
// field for each it refuses.
func TestPropertyCreateWaterRulesAgree(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanPro))
	doc, err := contractDoc()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := compiledSchema(doc.Components.Schemas["PropertyCreate"])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body  string
		param string // the field a 400 names; "" for a 201
	}{
		{`{"name":"A","electricity_rate":800,"water_rate":1800}`, ""},
		{`{"name":"A","electricity_rate":800,"water_billing":"metered","water_rate":1800,"water_flat_amount":null}`, ""},
		{`{"name":"A","electricity_rate":800}`, "water_rate"},
		{`{"name":"A","electricity_rate":800,"water_billing":"metered"}`, "water_rate"},
		{`{"name":"A","electricity_rate":800,"water_rate":1800,"water_flat_amount":10000}`, "water_flat_amount"},
		{`{"name":"A","electricity_rate":800,"water_billing":"flat_per_room","water_flat_amount":10000}`, ""},
		{`{"name":"A","electricity_rate":800,"water_billing":"flat_per_person","water_rate":0,"water_flat_amount":0}`, ""},
		{`{"name":"A","electricity_rate":800,"water_billing":"flat_per_room"}`, "water_flat_amount"},
		{`{"name":"A","electricity_rate":800,"water_billing":"flat_per_room","water_flat_amount":null}`, "water_flat_amount"},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatal(err)
		}
		docErr := schema.Validate(v)
		if (docErr == nil) != (c.param == "") {
			t.Errorf("%s: the document says %v", c.body, docErr)
		}
		res, err := h.send(req{method: "POST", path: "/v1/properties", key: key, body: c.body})
		if err != nil {
			t.Fatal(err)
		}
		if c.param == "" {
			want(t, res, http.StatusCreated)
		} else if want(t, res, http.StatusBadRequest); res.errField("param") != c.param {
			t.Errorf("%s: 400 names %q, want %q", c.body, res.errField("param"), c.param)
		}
	}
}
