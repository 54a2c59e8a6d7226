package store_test

import (
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// A room's readings as readingRooms reads them in one text column: each
// reading's ID, month and meters (previous, current, rollover as 1 or 0),
// with each meter's usage computed as rental.Usage does; anything else
// is an error, never a reading made up of the wrong values.
func TestParseRoomReadings(t *testing.T) {
	got, err := store.ParseRoomReadings("mrd_a 2026-07 9800 50 1 100 130 0 mrd_b 2026-08 50 300 0 9995 10 1")
	if err != nil || len(got) != 2 {
		t.Fatalf("two readings: %v %v", got, err)
	}
	a, b := got[0], got[1]
	if a.ID != "mrd_a" || a.Month != "2026-07" || a.Electricity.Previous != 9800 || a.Electricity.Current != 50 || !a.Electricity.Rollover ||
		a.Electricity.Usage != rental.Usage(9800, 50, true) || a.Water.Previous != 100 || a.Water.Current != 130 || a.Water.Rollover || a.Water.Usage != 30 {
		t.Fatalf("first: %+v", a)
	}
	if b.ID != "mrd_b" || b.Month != "2026-08" || b.Electricity.Usage != 250 || b.Electricity.Rollover || !b.Water.Rollover || b.Water.Usage != rental.Usage(9995, 10, true) {
		t.Fatalf("second: %+v", b)
	}
	if got, err := store.ParseRoomReadings(""); got != nil || err != nil {
		t.Fatalf("none: %v %v", got, err)
	}
	for _, bad := range []string{"mrd_a 2026-07 1 2 0 3 4", "mrd_a 2026-07 1 2 0 3 4 0 mrd_b", "mrd_a 2026-07 1 x 0 3 4 0", "mrd_a 2026-07 1 2 0 3 99999999999999999999 0"} {
		if got, err := store.ParseRoomReadings(bad); got != nil || err == nil {
			t.Errorf("%q: %v %v, want an error", bad, got, err)
		}
	}
}
