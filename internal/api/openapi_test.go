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
