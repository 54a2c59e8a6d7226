package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"rentapi/internal/store/storetest"
)

// The router and the document describe the same routes: a registered route
// missing from the document fails, and so does a documented one that is not
// served.
func TestRoutesMatchDocument(t *testing.T) {
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
