package rental

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The digit-by-digit timestamps are time's own TimeLayout, instant by
// instant, across the years a rental can name and past them, as
// encoding/json writes them: by value, by pointer and nil.
func TestTimeJSONIsTheLayout(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	at := []time.Time{time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 7, 5, 9, 0, time.FixedZone("ICT", 7*3600))}
	for range 10000 {
		at = append(at, time.UnixMilli(r.Int64N(300*365*24*3600*1000)))
	}
	for _, tm := range at {
		v := Time{Time: tm}
		got, err := json.Marshal(struct {
			V Time
			P *Time
			N *Time
		}{v, &v, nil})
		layout, _ := json.Marshal(tm.UTC().Format(TimeLayout))
		if want := fmt.Sprintf(`{"V":%s,"P":%[1]s,"N":null}`, layout); err != nil || string(got) != want {
			t.Fatalf("%v: %s %v, want %s", tm, got, err, want)
		}
	}
}

// Quantities print as the shortest decimal of their thousandths, and
// parse back to themselves.
func TestQuantityJSON(t *testing.T) {
	t.Parallel()
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

// BenchmarkEncodeBills is the encoding of a page of bills as the API
// renders it (21 bills, three timestamps and two quantities each).
func BenchmarkEncodeBills(b *testing.B) {
	now := time.Now()
	issued := Time{Time: now}
	tn := "tnt_abcdefghijklmnop"
	bills := make([]Bill, 21)
	for i := range bills {
		bills[i] = Bill{ID: "bill_0123456789abcdefghij", Object: "bill", RoomID: "room_0123456789abcdefghij", PropertyID: "prop_0123456789abcdefghij",
			TenantID: &tn, Month: "2026-10", Status: "issued", Currency: "thb", Rent: 350000,
			Electricity: BillElectricity{Usage: 123456, Rate: 800, Amount: 98765}, Water: BillWater{Usage: 4500, Rate: 1800, Amount: 8100, Billing: "metered", Occupants: 1},
			Total: 456789, DueDate: "2026-11-05", IssuedAt: &issued, ReadingID: "mrd_0123456789abcdefghij", CreatedAt: Time{Time: now}, UpdatedAt: Time{Time: now}}
	}
	v := struct {
		Object string `json:"object"`
		Data   []Bill `json:"data"`
	}{"list", bills}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		json.NewEncoder(&buf).Encode(v)
	}
}
