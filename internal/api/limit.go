package api

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"rentapi/internal/bucket"
	"rentapi/internal/rental"
)

// limits applies the per-second rate limits and the failed-key protection
// over one bucket store, which falls back to this process's own buckets
// when Redis is down (fallback). Should the store still fail, requests are
// let through and the failure is logged: the limits protect the service,
// they must not be what takes it down.
type limits struct {
	store bucket.Store
	log   *slog.Logger
	off   bool // per-second limits turned off by the operator
}

// allow takes a token for the key's developer and mode (limits apply to
// the developer account as a whole, test and live separately) and writes
// the X-RateLimit headers; without a token it is 429 rate_limited. Every
// request with a valid key takes one, whatever its answer, and only one:
// a request run again (see adapt) answers on the token its first run
// took, kept in taken, when the bucket is the same.
func (l *limits) allow(ctx context.Context, h http.Header, o *rental.KeyOwner, now time.Time, taken *tokenTaken) error {
	plan := o.Developer.Plan.Limits()
	st := bucket.State{Allowed: true, Remaining: plan.Burst}
	name := "rate:" + o.Developer.ID + ":" + string(o.Key.Mode)
	switch {
	case taken.bucket == name:
		st = taken.state
	case !l.off:
		var err error
		st, err = l.store.Take(ctx, name, bucket.Limit{Rate: plan.RatePerSecond, Per: time.Second, Burst: plan.Burst}, 1, now)
		if err != nil {
			l.log.ErrorContext(ctx, "rate limit store", "error", err.Error())
			st = bucket.State{Allowed: true, Remaining: plan.Burst}
		}
		if st.Allowed { // a refusal took nothing: a run after it asks again
			*taken = tokenTaken{bucket: name, state: st}
		}
	}
	h.Set(limitHeader, strconv.Itoa(plan.Burst))
	h.Set(remainingHeader, strconv.Itoa(st.Remaining))
	h.Set(resetHeader, strconv.FormatInt(int64(math.Ceil(float64(now.Add(st.ResetAfter).UnixMilli())/1000)), 10))
	if st.Allowed {
		return nil
	}
	return rental.RateLimited(plan.RatePerSecond, plan.Burst, st.RetryAfter)
}

// tokenTaken is the token of a developer's per-second limit that a
// request's first run took (see allow): the bucket, and the state the
// take left it in.
type tokenTaken struct {
	bucket string
	state  bucket.State
}

// failedKeys is the bucket of requests with invalid keys each client
// address may make: 30 per minute.
var failedKeys = bucket.Limit{Rate: 30, Per: time.Minute, Burst: 30}

// failed counts one request with an invalid key from ip, and reports
// whether ip is over its failed attempts, and if so for how many seconds
// it stays so.
func (l *limits) failed(ctx context.Context, ip string, now time.Time) (wait int, over bool) {
	st, err := l.store.Take(ctx, "failed:"+ip, failedKeys, 1, now)
	if err != nil {
		l.log.ErrorContext(ctx, "rate limit store", "error", err.Error())
		return 0, false
	}
	if st.Allowed {
		return 0, false
	}
	return max(1, int(math.Ceil(st.RetryAfter.Seconds()))), true
}

// sendingLimit is the chat sends an account may make: 60 a minute, both
// send endpoints together, in the shared bucket store so that every process
// counts against one budget. The account is the acct_ one, a landlord as
// linked to one application, so one application's sends never use up
// another's to the same landlord.
var sendingLimit = bucket.Limit{Rate: 60, Per: time.Minute, Burst: 60}

// sending takes one chat send from the account's budget, or is 429
// sending_limit with the seconds until the next one is free. Like the other
// limits it lets sends through when the bucket store fails, and it is off
// with the per-second limits (capacity benchmarks).
func (l *limits) sending(ctx context.Context, acct *rental.Account, now time.Time) error {
	if l.off {
		return nil
	}
	st, err := l.store.Take(ctx, "send:"+acct.ID, sendingLimit, 1, now)
	if err != nil {
		l.log.ErrorContext(ctx, "rate limit store", "error", err.Error())
		return nil
	}
	if st.Allowed {
		return nil
	}
	return rental.SendingLimited(sendingLimit.Rate, st.RetryAfter)
}
