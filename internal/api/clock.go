package api

import (
	"context"
	"net/http"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
)

// getClock shows the sandbox's clock: GET /v1/test-helpers/clock.
func (s *Server) getClock(c *call) (int, any, error) {
	if err := rental.CheckTestHelper(c.caller.mode); err != nil {
		return 0, nil, err
	}
	offset, err := c.q.ClockOffset(c.ctx, c.acct().LandlordID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{rental.NewTestClock(offset, s.now())}, nil
}

// advanceClock moves the sandbox's clock forward (POST
// /v1/test-helpers/clock/advance), and before it answers, everything
// time-driven that fell due on the sandbox's clock in between has
// happened (jobs.Steps), each step in transactions of its own once the
// move committed.
func (s *Server) advanceClock(c *call) (int, any, error) {
	if err := rental.CheckTestHelper(c.caller.mode); err != nil {
		return 0, nil, err
	}
	f, err := parseObject(c.body, "to", "days")
	if err != nil {
		return 0, nil, err
	}
	var a rental.ClockAdvance
	if err := read(into(&a.To, f.time, "to"), into(&a.Days, f.int, "days")); err != nil {
		return 0, nil, err
	}
	acct := c.acct()
	from, to, err := c.tx.AdvanceClock(c.ctx, acct, a)
	if err != nil {
		return 0, nil, err
	}
	c.then = func(ctx context.Context) error { return jobs.CatchUp(ctx, s.db, acct, from, to) }
	real := s.now()
	return http.StatusOK, data{rental.NewTestClock(to.Sub(real), real)}, nil
}
