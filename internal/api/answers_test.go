package api

import (
	"bytes"
	"maps"
	"net/http"
	"slices"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/request"
)

// The kept answers hold at most their budget (each answer's body, tag and
// bookkeeping), dropping the oldest first, keep nothing over the budget or
// other than plain JSON, and hand out headers of their own: a response's
// ETag set later is not kept.
func TestAnswersBudget(t *testing.T) {
	a := newAnswers(3 * keptCost("three", make([]byte, 100)))
	ok := func(n int) response {
		return response{status: http.StatusOK, json: true, body: bytes.Repeat([]byte("x"), n)}
	}
	a.put("one", ok(100))
	a.put("two", ok(100))
	a.put("three", ok(100))
	a.put("four", ok(100)) // over the budget: "one" goes
	if _, kept := a.get("one"); kept {
		t.Fatal("the oldest answer was kept over the budget")
	}
	for _, tag := range []string{"two", "three", "four"} {
		resp, kept := a.get(tag)
		if !kept || len(resp.body) != 100 || resp.contentType() != "application/json" {
			t.Fatalf("%s: %v %d %v", tag, kept, len(resp.body), resp.header)
		}
		resp.etag = `"x"`
		resp.set("Link", "<x>")
	}
	if resp, _ := a.get("two"); resp.etag != "" || resp.header != nil {
		t.Fatal("a header set on an answer handed out was kept")
	}
	a.put("big", ok(3*keptCost("three", make([]byte, 100))))
	if _, kept := a.get("big"); kept {
		t.Fatal("an answer over the whole budget was kept")
	}
	withLink := ok(10)
	withLink.set("Link", "<x>")
	a.put("link", withLink)
	if _, kept := a.get("link"); kept {
		t.Fatal("an answer with a header of its own was kept")
	}
	var none *answers
	none.put("x", ok(1))
	if _, kept := none.get("x"); kept {
		t.Fatal("no answers kept anything")
	}
}

// The header names the service sets or reads on every request are spelled
// as Go keeps them, so that no lookup converts them anew, and are the
// headers the documents name.
func TestHeaderNames(t *testing.T) {
	for documented, spelled := range map[string]string{
		rental.AccountHeader:    accountHeader,
		"X-SERVICE-Mode":        modeHeader,
		"ETag":                  etagHeader,
		"X-RateLimit-Limit":     limitHeader,
		"X-RateLimit-Remaining": remainingHeader,
		"X-RateLimit-Reset":     resetHeader,
		"X-Request-ID":          request.IDHeader,
	} {
		if want := http.CanonicalHeaderKey(documented); spelled != want {
			t.Errorf("%s is spelled %q, want %q", documented, spelled, want)
		}
	}
}

// A snapshot of a writer's headers puts back exactly what was there before
// a run, whatever the run set, added or deleted, with few headers or many.
func TestHeaderSnapshot(t *testing.T) {
	for _, before := range []http.Header{
		{},
		{"X-Request-Id": {"req_1"}},
		{"X-Request-Id": {"req_1"}, "Connection": {"close"}, "Vary": {"a", "b"}},
	} {
		h := before.Clone()
		var hs headerSnapshot
		hs.take(h)
		for range 2 { // a run, then a run after it
			h.Set("X-Request-Id", "other")
			h.Add("Vary", "c")
			h.Del("Connection")
			h.Set("X-Service-Mode", "live")
			hs.restore(h)
			if !maps.EqualFunc(h, before, slices.Equal) {
				t.Fatalf("restored %v, want %v", h, before)
			}
		}
	}
}
