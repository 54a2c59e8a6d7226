package api

import (
	"net/http"
	"sync"
)

// answers keeps the answers of reads tagged by a landlord's data version
// (see Server.read), by their tag: the tag is made from everything that
// decides the answer (the caller, the build, the path and query, the
// version of the landlord's data), so an answer kept under it is the very
// answer the handler would make again, until a write moves the version on
// and the tag with it. A client polling a list without If-None-Match, or
// many clients of one account reading the same page, is then answered
// without the page's query and encoding. It holds at most maxBytes of
// bodies, dropping the oldest first; answers of versions gone are never
// asked for again and age out the same way. Each process keeps its own;
// what decides a hit is read from the database at every request, so a
// write on any process is seen at the next read on every other.
type answers struct {
	mu       sync.Mutex
	byTag    map[string][]byte // 200s' JSON bodies, shared and never changed
	order    []string          // tags, oldest first
	bytes    int
	maxBytes int
}

// keptCost is what a kept answer costs against the budget: its body, its
// tag, and what the map and the order hold for it (a few hundred bytes,
// which a budget of bodies alone would let many small answers outgrow).
func keptCost(tag string, body []byte) int { return len(body) + len(tag) + 256 }

// keptAnswersBytes is how much of bodies a process keeps: a few thousand
// pages of twenty bills.
const keptAnswersBytes = 16 << 20

// maxKeptBody bounds one kept body: a longer answer is made each time.
const maxKeptBody = 256 << 10

func newAnswers(maxBytes int) *answers {
	return &answers{byTag: map[string][]byte{}, maxBytes: maxBytes}
}

// get is the answer kept under tag, as a response of its own.
func (a *answers) get(tag string) (response, bool) {
	if a == nil {
		return response{}, false
	}
	a.mu.Lock()
	body, ok := a.byTag[tag]
	a.mu.Unlock()
	if !ok {
		return response{}, false
	}
	return response{status: http.StatusOK, json: true, body: body}, true
}

// put keeps a copy of resp, a 200 made for tag, if it is JSON with no
// other header and not too long.
func (a *answers) put(tag string, resp response) {
	cost := keptCost(tag, resp.body)
	if a == nil || len(resp.body) > maxKeptBody || cost > a.maxBytes ||
		len(resp.header) != 0 || !resp.json || resp.etag != "" {
		return
	}
	body := append([]byte(nil), resp.body...)
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.byTag[tag]; ok {
		return
	}
	for a.bytes+cost > a.maxBytes && len(a.order) > 0 {
		old := a.order[0]
		a.order = a.order[1:]
		a.bytes -= keptCost(old, a.byTag[old])
		delete(a.byTag, old)
	}
	a.byTag[tag] = body
	a.order = append(a.order, tag)
	a.bytes += cost
}
