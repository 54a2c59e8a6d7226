package rental

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The digit-by-digit timestamps are time's own TimeLayout, instant by
// instant, across the years a rental can name and past them.
func TestTimeJSONIsTheLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	at := []time.Time{time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 7, 5, 9, 0, time.FixedZone("ICT", 7*3600))}
	for range 10000 {
		at = append(at, time.UnixMilli(r.Int64N(300*365*24*3600*1000)))
	}
	for _, tm := range at {
		got, _ := Time{tm}.MarshalJSON()
		want, _ := json.Marshal(tm.UTC().Format(TimeLayout))
		if string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
}

// Quantities print as the shortest decimal of their thousandths, and
// parse back to themselves.
func TestQuantityJSON(t *testing.T) {
	for _, c := range []struct {
		q    Quantity
		want string
	}{{0, "0"}, {1, "0.001"}, {10, "0.01"}, {100, "0.1"}, {1500, "1.5"}, {1230, "1.23"}, {1000, "1"}, {MaxQuantity, "9999999.999"}, {-1500, "-1.5"}} {
		got, _ := c.q.MarshalJSON()
		if string(got) != c.want || c.q.String() != c.want {
			t.Errorf("%d: %s / %s, want %s", c.q, got, c.q.String(), c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		q := Quantity(r.Int64N(int64(MaxQuantity) + 1))
		s := q.String()
		back, err := ParseQuantity("q", s)
		if err != nil || back != q {
			t.Fatalf("%d printed %s, parsed %d (%v)", q, s, back, err)
		}
		if want := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%d.%03d", q/1000, q%1000), "0"), "."); s != want {
			t.Fatalf("%d: %s, want %s", q, s, want)
		}
	}
}
