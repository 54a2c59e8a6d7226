package rentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"net/url"
)

// all yields the items of a list's pages, asking for the next page only
// when the loop has taken every item of this one.
func all[T any](ctx context.Context, c *Client, path string, query url.Values, opts []RequestOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		q := maps.Clone(query)
		for {
			var page struct {
				Data       []*T `json:"data"`
				Pagination struct {
					HasMore    bool    `json:"has_more"`
					NextCursor *string `json:"next_cursor"`
				} `json:"pagination"`
			}
			if err := c.page(ctx, path, q, &page, opts); err != nil {
				yield(nil, err)
				return
			}
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
			if !page.Pagination.HasMore || page.Pagination.NextCursor == nil {
				return
			}
			if q == nil {
				q = url.Values{}
			}
			q.Set("cursor", *page.Pagination.NextCursor)
		}
	}
}

// page gets one page of a list into out, whole (data and pagination).
func (c *Client) page(ctx context.Context, path string, query url.Values, out any, opts []RequestOption) error {
	a, err := c.do(ctx, "GET", path, query, nil, opts)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("rentapi: decoding the page of %s: %w", path, err)
	}
	return nil
}
