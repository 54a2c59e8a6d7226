package api

import (
	"bytes"
	"net/http"
	"testing"
)

// The kept answers hold at most their budget (each answer's body, tag and
// bookkeeping), dropping the oldest first, keep nothing over the budget or
// other than plain JSON, and hand out headers of their own: a response's
// ETag set later is not kept.
func TestAnswersBudget(t *testing.T) {
	a := newAnswers(3 * keptCost("three", make([]byte, 100)))
	ok := func(n int) response {
		return response{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: bytes.Repeat([]byte("x"), n)}
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
		if !kept || len(resp.body) != 100 || resp.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %v %d %v", tag, kept, len(resp.body), resp.header)
		}
		resp.header.Set("ETag", `"x"`)
	}
	if resp, _ := a.get("two"); resp.header.Get("ETag") != "" {
		t.Fatal("a header set on an answer handed out was kept")
	}
	a.put("big", ok(3*keptCost("three", make([]byte, 100))))
	if _, kept := a.get("big"); kept {
		t.Fatal("an answer over the whole budget was kept")
	}
	withLink := ok(10)
	withLink.header.Set("Link", "<x>")
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
