package rental

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func q(s string) Quantity {
	v, err := ParseQuantity("x", s)
	if err != nil {
		panic(err)
	}
	return v
}

func part(prev, cur string, rollover bool) PartInput {
	in := PartInput{Set: true, Current: Of(q(cur)), Rollover: Of(rollover)}
	if prev != "" {
		in.Previous = Of(q(prev))
	}
	return in
}

// The bill's arithmetic: rent plus electricity plus water, in satang, each
// line rounded half up to a whole satang.
func TestBillArithmetic(t *testing.T) {
	t.Parallel()
	flat := int64(10_000)
	cases := []struct {
		name        string
		rent        int64
		elec        PartInput
		elecDefault string
		elecRate    int64
		water       PartInput
		waterRate   int64
		billing     string
		flat        *int64
		occupants   int64
		wantElec    int64
		wantWater   int64
		wantTotal   int64
	}{
		{name: "metered whole units", rent: 350_000, elec: part("1200", "1320", false), elecRate: 800,
			water: part("300", "306", false), waterRate: 1800, billing: WaterMetered,
			wantElec: 96_000, wantWater: 10_800, wantTotal: 456_800},
		{name: "fractional meter values", rent: 350_000, elec: part("1200.25", "1320.5", false), elecRate: 800,
			water: part("300.125", "306.5", false), waterRate: 1800, billing: WaterMetered,
			wantElec: 96_200, wantWater: 11_475, wantTotal: 457_675},
		{name: "half a satang rounds up", rent: 0, elec: part("0", "0.001", false), elecRate: 500,
			water: part("0", "0.003", false), waterRate: 500, billing: WaterMetered,
			wantElec: 1, wantWater: 2, wantTotal: 3},
		{name: "just under half rounds down", rent: 0, elec: part("0", "0.001", false), elecRate: 499,
			water: part("0", "0", false), waterRate: 1, billing: WaterMetered,
			wantElec: 0, wantWater: 0, wantTotal: 0},
		{name: "flat per room ignores usage", rent: 550_000, elec: part("5000", "5100", false), elecRate: 700,
			water: part("10", "99", false), billing: WaterFlatPerRoom, flat: &flat,
			wantElec: 70_000, wantWater: 10_000, wantTotal: 630_000},
		{name: "flat per person", rent: 550_000, elec: part("5000", "5100", false), elecRate: 700,
			water: part("10", "12", false), billing: WaterFlatPerPerson, flat: &flat, occupants: 3,
			wantElec: 70_000, wantWater: 30_000, wantTotal: 650_000},
		{name: "four-digit meter rolls over", rent: 0, elec: part("9950", "30", true), elecRate: 800,
			water: part("9999.5", "0.5", true), waterRate: 1800, billing: WaterMetered,
			wantElec: 64_000, wantWater: 1_800, wantTotal: 65_800},
		{name: "five-digit meter rolls over", rent: 0, elec: part("99990", "10", true), elecRate: 800,
			water: part("0", "1", false), waterRate: 1800, billing: WaterMetered,
			wantElec: 16_000, wantWater: 1_800, wantTotal: 17_800},
		{name: "previous defaults to the last reading", rent: 100, elec: PartInput{Set: true, Current: Of(q("1450"))}, elecDefault: "1400", elecRate: 800,
			water: part("0", "0", false), waterRate: 1800, billing: WaterMetered,
			wantElec: 40_000, wantWater: 0, wantTotal: 40_100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var def Quantity
			if c.elecDefault != "" {
				def = q(c.elecDefault)
			}
			e, err := Measure("electricity", c.elec, def, c.elecRate)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Measure("water", c.water, 0, c.waterRate)
			if err != nil {
				t.Fatal(err)
			}
			r := Reading{Electricity: e, Water: WaterPart{ReadingPart: w, Billing: c.billing, FlatAmount: c.flat}}
			b := Bill{Rent: c.rent, Water: BillWater{Occupants: c.occupants}}
			b.Price(r)
			if b.Electricity.Amount != c.wantElec || b.Water.Amount != c.wantWater || b.Total != c.wantTotal {
				t.Fatalf("electricity %d water %d total %d; want %d %d %d", b.Electricity.Amount, b.Water.Amount, b.Total, c.wantElec, c.wantWater, c.wantTotal)
			}
		})
	}
}

// A rate change between months: each month is priced at the rate it
// recorded.
func TestRateChangeBetweenMonths(t *testing.T) {
	t.Parallel()
	oct, _ := Measure("electricity", part("1000", "1100", false), 0, 800)
	nov, _ := Measure("electricity", PartInput{Set: true, Current: Of(q("1200"))}, oct.Current, 900)
	for _, c := range []struct {
		r    ReadingPart
		want int64
	}{{oct, 80_000}, {nov, 90_000}} {
		b := Bill{}
		b.Price(Reading{Electricity: c.r, Water: WaterPart{Billing: WaterMetered}})
		if b.Electricity.Amount != c.want {
			t.Fatalf("amount %d, want %d", b.Electricity.Amount, c.want)
		}
	}
}

func TestMeasureRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    PartInput
		param string
	}{
		{part("100", "90", false), "electricity.current"},                                       // backwards without rollover
		{PartInput{Set: true, Current: Of(q("5")), Rollover: Of(true)}, "electricity.rollover"}, // rollover without an explicit previous
		{part("90", "100", true), "electricity.rollover"},                                       // rollover that did not roll
		{part("100000", "5", true), "electricity.previous"},                                     // six-digit meters do not roll over here
		{PartInput{Set: true}, "electricity.current"},
	} {
		_, err := Measure("electricity", c.in, 0, 800)
		e, ok := AsError(err)
		if !ok || e.Param != c.param {
			t.Errorf("%+v: %v, want param %s", c.in, err, c.param)
		}
	}
	for _, s := range []string{"-1", "1.0001", "1e3", "10000000", "01", "", "1.", ".5", "+1", "1 ", " 1", "00.5", "1.2.3", "1.a", "a", "0x1", "9999999.9999", "1,5"} {
		if _, err := ParseQuantity("x", s); err == nil {
			t.Errorf("ParseQuantity(%q) accepted", s)
		}
	}
	if q("0") != 0 || q("0.000") != 0 || q("10.05") != 10050 || q("9999999.999") != MaxQuantity {
		t.Fatal("quantities parse wrongly")
	}
	if q("0.5").String() != "0.5" || q("12.340").String() != "12.34" || q("7").String() != "7" {
		t.Fatal("quantities print wrongly")
	}
}

func TestDueDate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		month string
		day   int64
		want  string
	}{
		{"2026-11", 5, "2026-12-05"},
		{"2026-12", 5, "2027-01-05"},
		{"2027-01", 31, "2027-02-28"},
		{"2028-01", 30, "2028-02-29"},
		{"2026-03", 31, "2026-04-30"},
	} {
		if got := DueDate(c.month, c.day); got != c.want {
			t.Errorf("DueDate(%s, %d) = %s, want %s", c.month, c.day, got, c.want)
		}
	}
}

func TestNormalizePhone(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0812345678":        "+66812345678",
		"081-234-5678":      "+66812345678",
		"+66 81 234 5678":   "+66812345678",
		"66812345678":       "+66812345678",
		"+66 (0)81 2345678": "+66812345678",
		"02-123-4567":       "+6621234567",
		"053 123 456":       "+6653123456",
	} {
		got, err := NormalizePhone(in)
		if err != nil || got != want {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "12345", "+1 415 555 0100", "0812345678901", "08123x5678", "0112345678", "0212345678", "+0812345678"} {
		if got, err := NormalizePhone(in); err == nil {
			t.Errorf("NormalizePhone(%q) = %q, accepted", in, got)
		}
	}
}

// ParseQuantity accepts exactly the strings of its grammar, written here
// as a regular expression: every string of up to nine characters drawn
// from the bytes that matter, at random.
func TestParseQuantityGrammar(t *testing.T) {
	t.Parallel()
	grammar := regexp.MustCompile(`^(0|[1-9][0-9]{0,6})(\.[0-9]{1,3})?$`)
	r := rand.New(rand.NewPCG(5, 6))
	const alphabet = "0123456789.-e "
	for range 200000 {
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		got, err := ParseQuantity("x", s)
		if want := grammar.MatchString(s); want != (err == nil) {
			t.Fatalf("ParseQuantity(%q): %v, grammar says %v", s, err, want)
		}
		if err == nil {
			whole, frac, _ := strings.Cut(s, ".")
			w, _ := strconv.ParseInt(whole, 10, 64)
			f, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
			if got != Quantity(w*1000+f) {
				t.Fatalf("ParseQuantity(%q) = %d", s, got)
			}
		}
	}
}
