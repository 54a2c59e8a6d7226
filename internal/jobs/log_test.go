package jobs_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"rentapi/internal/jobs"
)

// River's lines reach the service's log from warning up (from debug when
// the service logs at debug), marked as River's; its retry warning for a
// webhook delivery is dropped, and every other job's is kept.
func TestRiverLog(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{false, true} {
		var buf bytes.Buffer
		river := jobs.RiverLog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), debug)
		river.Debug("producer: fetched jobs")
		river.Info("River client started")
		river.Warn("jobexecutor.JobExecutor: Job errored; retrying", "error", "status 500", "job_id", 1, "job_kind", "webhook_delivery")
		river.Warn("jobexecutor.JobExecutor: Job errored; retrying", "error", "database is locked", "job_id", 2, "job_kind", "overdue_sweep")
		river.With("client_id", "c1").Error("jobexecutor.JobExecutor: Job errored", "error", "status 410", "job_kind", "webhook_delivery")
		got := buf.String()
		for line, present := range map[string]bool{
			`"msg":"producer: fetched jobs"`: debug,
			`"msg":"River client started"`:   debug,
			`"error":"status 500"`:           false, // a delivery's retry
			`"error":"database is locked"`:   true,  // a sweep's retry
			`"error":"status 410"`:           true,  // an error on a delivery's last run
		} {
			if strings.Contains(got, line) != present {
				t.Errorf("debug %v: %s present is %v, want %v:\n%s", debug, line, !present, present, got)
			}
		}
		if n := strings.Count(got, `"component":"river"`); n != strings.Count(got, "\n") {
			t.Errorf("%d of %d lines marked as River's", n, strings.Count(got, "\n"))
		}
	}
}
