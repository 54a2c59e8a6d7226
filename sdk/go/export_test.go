package rentapi

import "time"

// WithBackoff sets the first wait after a network error or a 500, so the
// retry tests wait milliseconds rather than seconds.
func WithBackoff(d time.Duration) Option { return func(c *Client) { c.backoff = d } }
