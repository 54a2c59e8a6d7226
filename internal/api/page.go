package api

import (
	"encoding/binary"
	"net/http"
	"strings"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// listQuery is the query every list accepts, plus the list's own filters.
func listQuery(filters ...string) []string {
	return append([]string{"limit", "cursor", "order"}, filters...)
}

// maxCursorLen is the longest cursor accepted or issued.
const maxCursorLen = 200

// list is the shape of every list response.
type list[T any] struct {
	Data       []T        `json:"data"`
	Pagination pagination `json:"pagination"`
}

type pagination struct {
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// pager reads a list request's limit, order and cursor, and issues the next
// cursor. A cursor is sealed under the server secret and bound to the
// account, the route, the filters and the order: any edit, or use with
// anything else, fails to open and is 400 invalid_cursor.
type pager struct {
	c       *call
	filters string
	page    store.Page
}

// newPager parses the common list parameters. filters names the list's
// other query parameters, whose values the cursor is bound to.
func (s *Server) newPager(c *call, filters ...string) (*pager, error) {
	q := c.params
	bound := make([]string, len(filters))
	for i, name := range filters {
		bound[i] = name + "=" + q.Get(name)
	}
	p := &pager{c: c, filters: strings.Join(bound, "&"), page: store.Page{Limit: rental.DefaultPageLimit}}
	var err error
	if q.Has("limit") {
		if p.page.Limit, err = rental.PageLimit(q.Get("limit")); err != nil {
			return nil, err
		}
	}
	if q.Has("order") {
		if p.page.Asc, err = rental.PageOrder(q.Get("order")); err != nil {
			return nil, err
		}
	}
	if q.Has("cursor") {
		pos, err := s.openCursor(p, q.Get("cursor"))
		if err != nil {
			return nil, err
		}
		p.page.After = pos
	}
	return p, nil
}

// context is what a cursor is bound to.
func (p *pager) context() []byte {
	order := "desc"
	if p.page.Asc {
		order = "asc"
	}
	return []byte(p.c.caller.key.App.ID + "\n" + p.c.caller.accountID() + "\n" + p.c.r.Pattern + "\n" + p.filters + "\n" + order)
}

func (s *Server) openCursor(p *pager, cursor string) (*store.Position, error) {
	if cursor == "" || len(cursor) > maxCursorLen {
		return nil, rental.BadCursor()
	}
	b, err := s.secret.Open(cursor, p.context())
	if err != nil || len(b) < 9 {
		return nil, rental.BadCursor()
	}
	return &store.Position{CreatedAt: int64(binary.BigEndian.Uint64(b[:8])), ID: string(b[8:])}, nil
}

// result builds the list response; last is the position of the page's last
// item when more follow.
func result[T any](s *Server, p *pager, items []T, more bool, pos func(T) store.Position) list[T] {
	out := list[T]{Data: items, Pagination: pagination{HasMore: more}}
	if more && len(items) > 0 {
		last := pos(items[len(items)-1])
		b := binary.BigEndian.AppendUint64(nil, uint64(last.CreatedAt))
		cur := s.secret.SealFixed(append(b, last.ID...), p.context())
		out.Pagination.NextCursor = &cur
	}
	return out
}

// listed renders a page read by the store, or its error.
func listed[T any](s *Server, p *pager, pos func(T) store.Position, items []T, more bool, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, result(s, p, items, more, pos), nil
}
