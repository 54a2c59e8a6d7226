package rental

import (
	"testing"
	"time"
)

func TestAdvanceClock(t *testing.T) {
	t.Parallel()
	real := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	at := func(d time.Duration) Optional[Time] { return Of(Time{Time: real.Add(d)}) }
	for _, tc := range []struct {
		name       string
		a          ClockAdvance
		offset     time.Duration // the clock's before
		want       time.Duration
		code, para string
	}{
		{name: "days from real time", a: ClockAdvance{Days: Of[int64](30)}, want: 30 * day},
		{name: "days from a moved clock", a: ClockAdvance{Days: Of[int64](1)}, offset: 10 * day, want: 11 * day},
		{name: "to a later time", a: ClockAdvance{To: at(45 * day)}, offset: 10 * day, want: 45 * day},
		{name: "to exactly 400 days ahead", a: ClockAdvance{To: at(400 * day)}, want: 400 * day},
		{name: "400 days", a: ClockAdvance{Days: Of[int64](400)}, want: 400 * day},
		{name: "to 401 days ahead", a: ClockAdvance{To: at(401 * day)}, code: "invalid_parameter", para: "to"},
		{name: "days past the bound", a: ClockAdvance{Days: Of[int64](300)}, offset: 200 * day, code: "invalid_parameter", para: "days"},
		{name: "401 days", a: ClockAdvance{Days: Of[int64](401)}, code: "invalid_parameter", para: "days"},
		{name: "zero days", a: ClockAdvance{Days: Of[int64](0)}, code: "invalid_parameter", para: "days"},
		{name: "negative days", a: ClockAdvance{Days: Of[int64](-1)}, code: "invalid_parameter", para: "days"},
		{name: "null days", a: ClockAdvance{Days: Optional[int64]{Set: true, Null: true}}, code: "invalid_parameter", para: "days"},
		{name: "null to", a: ClockAdvance{To: Optional[Time]{Set: true, Null: true}}, code: "invalid_parameter", para: "to"},
		{name: "both", a: ClockAdvance{To: at(day), Days: Of[int64](1)}, code: "invalid_parameter", para: "days"},
		{name: "neither", code: "parameter_missing", para: "to"},
		{name: "backwards", a: ClockAdvance{To: at(5 * day)}, offset: 10 * day, code: "invalid_state"},
		{name: "to the clock's own time", a: ClockAdvance{To: at(10 * day)}, offset: 10 * day, code: "invalid_state"},
		{name: "to the past of real time", a: ClockAdvance{To: at(-time.Hour)}, code: "invalid_state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AdvanceClock(tc.a, real.Add(tc.offset), real)
			if tc.code == "" {
				if err != nil || got != tc.want {
					t.Fatalf("AdvanceClock = %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != tc.code || e.Param != tc.para {
				t.Fatalf("AdvanceClock error = %v; want %s on %q", err, tc.code, tc.para)
			}
		})
	}
}

func TestNewTestClock(t *testing.T) {
	t.Parallel()
	real := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	c := NewTestClock(48*time.Hour, real)
	if c.Object != "test_clock" || !c.Now.Equal(real.Add(48*time.Hour)) || !c.RealNow.Equal(real) {
		t.Fatalf("NewTestClock = %+v", c)
	}
}

func TestSendsDue(t *testing.T) {
	t.Parallel()
	last := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		attempts int
		to       time.Time
		want     int
	}{
		{"a new notification is due at once", 0, last, 1},
		{"before its creation nothing", 0, last.Add(-time.Second), 0},
		{"the first retry after 10 seconds", 1, last.Add(10 * time.Second), 1},
		{"not before", 1, last.Add(9 * time.Second), 0},
		{"two retries after 70 seconds", 1, last.Add(70 * time.Second), 2},
		{"every attempt of a new one after a day", 0, last.Add(24 * time.Hour), MaxSendAttempts},
		{"the rest after a day", 3, last.Add(24 * time.Hour), MaxSendAttempts - 3},
		{"none after the last", MaxSendAttempts, last.Add(24 * time.Hour), 0},
	} {
		if got := SendsDue(tc.attempts, last, tc.to); got != tc.want {
			t.Errorf("%s: SendsDue(%d) = %d; want %d", tc.name, tc.attempts, got, tc.want)
		}
	}
}
