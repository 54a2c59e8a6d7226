package rental

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A month's reading: the meters start from the latest reading before the
// month (or 0; a later month's reading does not count), unless the previous values are sent; the property's rates
// and water billing are kept with it; a month read already is 409
// resource_exists naming its reading; the parts' own refusals name them.
func TestNewReading(t *testing.T) {
	t.Parallel()
	room := Room{ID: "room_1", PropertyID: "prop_1", Number: "101"}
	flat := int64(15_000)
	metered := Property{ElectricityRate: 800, WaterBilling: WaterMetered, WaterRate: 1_800}
	flatWater := Property{ElectricityRate: 700, WaterBilling: WaterFlatPerRoom, WaterRate: 0, WaterFlatAmount: &flat}
	october := Reading{ID: "mrd_oct", Month: "2026-10", Electricity: ReadingPart{Current: q("1200")}, Water: WaterPart{ReadingPart: ReadingPart{Current: q("340")}}}
	november := Reading{ID: "mrd_nov", Month: "2026-11", Electricity: ReadingPart{Current: q("1300")}}
	december := Reading{ID: "mrd_dec", Month: "2026-12", Electricity: ReadingPart{Current: q("1400")}, Water: WaterPart{ReadingPart: ReadingPart{Current: q("350")}}}
	cases := []struct {
		name                     string
		prop                     Property
		readings                 []Reading
		month                    string
		elec, water              PartInput
		code, param              string
		ePrev, wPrev, eUse, wUse string
	}{
		{name: "first reading of a room", prop: metered, month: "2026-11", elec: part("", "120.5", false), water: part("", "7", false),
			ePrev: "0", wPrev: "0", eUse: "120.5", wUse: "7"},
		{name: "from the month before", prop: metered, readings: []Reading{october}, month: "2026-11", elec: part("", "1330", false), water: part("", "346.25", false),
			ePrev: "1200", wPrev: "340", eUse: "130", wUse: "6.25"},
		{name: "from a month long before", prop: flatWater, readings: []Reading{october}, month: "2027-03", elec: part("", "1200", false), water: part("", "340", false),
			ePrev: "1200", wPrev: "340", eUse: "0", wUse: "0"},
		{name: "previous values sent", prop: metered, readings: []Reading{october}, month: "2026-11", elec: part("1250", "1330", false), water: part("300", "310", false),
			ePrev: "1250", wPrev: "300", eUse: "80", wUse: "10"},
		{name: "a rollover", prop: metered, readings: []Reading{october}, month: "2026-11", elec: part("9990", "15", true), water: part("", "341", false),
			ePrev: "9990", wPrev: "340", eUse: "25", wUse: "1"},
		{name: "the month read already", prop: metered, readings: []Reading{october, november}, month: "2026-11", elec: part("", "1400", false), water: part("", "1", false),
			code: "resource_exists"},
		{name: "a later month is no latest", prop: metered, readings: []Reading{december, october}, month: "2026-11", elec: part("", "1330", false), water: part("", "346.25", false),
			ePrev: "1200", wPrev: "340", eUse: "130", wUse: "6.25"},
		{name: "below the latest", prop: metered, readings: []Reading{october}, month: "2026-11", elec: part("", "1100", false), water: part("", "350", false),
			code: "invalid_parameter", param: "electricity.current"},
		{name: "water below the latest", prop: metered, readings: []Reading{october}, month: "2026-11", elec: part("", "1300", false), water: part("", "300", false),
			code: "invalid_parameter", param: "water.current"},
		{name: "no electricity", prop: metered, month: "2026-11", water: part("", "3", false), code: "parameter_missing", param: "electricity.current"},
		{name: "no water", prop: metered, month: "2026-11", elec: part("", "3", false), code: "parameter_missing", param: "water.current"},
	}
	for _, c := range cases {
		src := ReadingSource{Room: room, Property: c.prop, Readings: c.readings, Month: c.month, Electricity: c.elec, Water: c.water}
		r, err := NewReading(src, now)
		if code(err) != c.code {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
			continue
		}
		if err != nil {
			e, _ := AsError(err)
			if e.Param != c.param || (c.code == "resource_exists" && (e.ResourceID != "mrd_nov" || !strings.Contains(e.Message, "room 101 in 2026-11"))) {
				t.Errorf("%s: %+v", c.name, e)
			}
			continue
		}
		if !ValidID(PrefixReading, r.ID) || r.Object != "meter_reading" || r.RoomID != "room_1" || r.PropertyID != "prop_1" ||
			r.Month != c.month || r.Currency != Currency || !r.CreatedAt.Equal(now) || !r.UpdatedAt.Equal(now) || r.BillID != nil {
			t.Errorf("%s: %+v", c.name, r)
		}
		e, w := r.Electricity, r.Water
		if e.Previous != q(c.ePrev) || w.Previous != q(c.wPrev) || e.Usage != q(c.eUse) || w.Usage != q(c.wUse) {
			t.Errorf("%s: electricity %+v water %+v", c.name, e, w.ReadingPart)
		}
		if r.Flags == nil || len(r.Flags) != 0 {
			t.Errorf("%s: flags %v of a vacant room with no history", c.name, r.Flags)
		}
		if e.Rate != c.prop.ElectricityRate || w.Rate != c.prop.WaterRate || w.Billing != c.prop.WaterBilling || w.FlatAmount != c.prop.WaterFlatAmount {
			t.Errorf("%s: rates %+v %+v", c.name, e, w)
		}
	}
}

// A correction: parts not sent stay; values not sent keep the recorded
// ones (the recorded previous counts as given with a rollover); the rates
// stay those recorded; a refusal changes nothing.
func TestReadingCorrect(t *testing.T) {
	t.Parallel()
	later := now.Add(time.Hour)
	recorded := func() Reading {
		return Reading{ID: "mrd_1", Month: "2026-11", CreatedAt: Time{Time: now}, UpdatedAt: Time{Time: now},
			Electricity: ReadingPart{Previous: q("1200"), Current: q("1330"), Usage: q("130"), Rate: 800},
			Water:       WaterPart{ReadingPart: ReadingPart{Previous: q("9998"), Current: q("3"), Usage: q("5"), Rate: 1800, Rollover: true}, Billing: WaterMetered}}
	}
	current := func(s string) PartInput { return PartInput{Set: true, Current: Of(q(s))} }
	cases := []struct {
		name                     string
		elec, water              PartInput
		code, param              string
		ePrev, eCur, wPrev, wCur string
		eRollover, wRollover     bool
	}{
		{name: "nothing sent", ePrev: "1200", eCur: "1330", wPrev: "9998", wCur: "3", wRollover: true},
		{name: "electricity's current", elec: current("1340"), ePrev: "1200", eCur: "1340", wPrev: "9998", wCur: "3", wRollover: true},
		{name: "electricity's previous", elec: PartInput{Set: true, Previous: Of(q("1210"))}, ePrev: "1210", eCur: "1330", wPrev: "9998", wCur: "3", wRollover: true},
		{name: "water keeps its rollover", water: current("4"), ePrev: "1200", eCur: "1330", wPrev: "9998", wCur: "4", wRollover: true},
		{name: "water's rollover undone", water: PartInput{Set: true, Previous: Of(q("1")), Current: Of(q("4")), Rollover: Of(false)},
			ePrev: "1200", eCur: "1330", wPrev: "1", wCur: "4"},
		{name: "electricity rolls over from the recorded previous", elec: PartInput{Set: true, Current: Of(q("10")), Rollover: Of(true)},
			ePrev: "1200", eCur: "10", eRollover: true, wPrev: "9998", wCur: "3", wRollover: true},
		{name: "a six-digit previous does not roll over", elec: PartInput{Set: true, Previous: Of(q("123456")), Current: Of(q("10")), Rollover: Of(true)},
			code: "invalid_parameter", param: "electricity.previous"},
		{name: "below the previous", elec: current("1100"), code: "invalid_parameter", param: "electricity.current"},
		{name: "water refused after electricity", elec: current("1340"), water: PartInput{Set: true, Current: Of(q("9999")), Rollover: Of(true)},
			code: "invalid_parameter", param: "water.rollover"},
	}
	for _, c := range cases {
		r := recorded()
		err := r.Correct(c.elec, c.water, later)
		if code(err) != c.code {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
			continue
		}
		if err != nil {
			if e, _ := AsError(err); e.Param != c.param {
				t.Errorf("%s: param %q, want %q", c.name, e.Param, c.param)
			}
			if before := recorded(); r.Electricity != before.Electricity || r.Water.ReadingPart != before.Water.ReadingPart || !r.UpdatedAt.Equal(now) {
				t.Errorf("%s: a refused correction changed %+v", c.name, r)
			}
			continue
		}
		e, w := r.Electricity, r.Water
		if e.Previous != q(c.ePrev) || e.Current != q(c.eCur) || w.Previous != q(c.wPrev) || w.Current != q(c.wCur) ||
			e.Rollover != c.eRollover || w.Rollover != c.wRollover {
			t.Errorf("%s: electricity %+v water %+v", c.name, e, w.ReadingPart)
		}
		if e.Usage != Usage(e.Previous, e.Current, e.Rollover) || w.Usage != Usage(w.Previous, w.Current, w.Rollover) {
			t.Errorf("%s: usage %s %s", c.name, e.Usage, w.Usage)
		}
		if e.Rate != 800 || w.Rate != 1800 || w.Billing != WaterMetered || !r.UpdatedAt.Equal(later) || !r.CreatedAt.Equal(now) {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
}

// A reading's flags: usage_high against twice the median of each meter's
// usage in the six months before (three readings at least; an even count's
// median halfway between its middle two; exactly twice is not high; a
// rollover's usage is what the meter counted), usage_zero for an occupied
// room whose meter did not move (flat water too).
func TestFlag(t *testing.T) {
	t.Parallel()
	// past is a reading of month with the electricity and water usage.
	past := func(month, e, w string) Reading {
		return Reading{Month: month, Electricity: ReadingPart{Usage: q(e)}, Water: WaterPart{ReadingPart: ReadingPart{Usage: q(w)}}}
	}
	normal := []Reading{past("2026-08", "100", "5"), past("2026-09", "120", "6"), past("2026-10", "110", "7")} // medians 110 and 6
	cases := []struct {
		name     string
		e, w     string
		earlier  []Reading
		occupied bool
		want     string
	}{
		{name: "usual usage", e: "130", w: "7", earlier: normal, occupied: true, want: ""},
		{name: "electricity spike", e: "220.001", w: "7", earlier: normal, want: "usage_high"},
		{name: "exactly twice is not high", e: "220", w: "12", earlier: normal, want: ""},
		{name: "water spike", e: "100", w: "12.001", earlier: normal, want: "usage_high"},
		{name: "fewer than three before", e: "1000", w: "100", earlier: normal[:2], want: ""},
		{name: "months outside the six", e: "1000", w: "100",
			earlier: []Reading{past("2026-03", "1", "1"), past("2026-04", "1", "1"), normal[0], normal[1], past("2026-11", "1", "1"), past("2026-12", "1", "1")}, want: ""},
		{name: "the sixth month before counts", e: "221", w: "7",
			earlier: []Reading{past("2026-05", "100", "5"), normal[1], normal[2]}, want: "usage_high"},
		{name: "even count: halfway between the middle two", e: "230.001", w: "7",
			earlier: append([]Reading{past("2026-06", "1000", "6")}, normal...), want: "usage_high"}, // 110 and 120: median 115
		{name: "even count at twice", e: "230", w: "12",
			earlier: append([]Reading{past("2026-06", "1000", "6")}, normal...), want: ""},
		{name: "a rollover's usage", e: "25", w: "7",
			earlier: []Reading{past("2026-08", "10", "5"), past("2026-09", "25", "6"), past("2026-10", "12", "7")}, want: "usage_high"},
		{name: "a median of zero", e: "0.001", w: "0", earlier: []Reading{past("2026-08", "0", "0"), past("2026-09", "0", "0"), past("2026-10", "5", "0")}, want: "usage_high"},
		{name: "occupied, no electricity", e: "0", w: "5", earlier: normal, occupied: true, want: "usage_zero"},
		{name: "occupied, no water", e: "100", w: "0", occupied: true, want: "usage_zero"},
		{name: "vacant, nothing used", e: "0", w: "0", earlier: normal, want: ""},
		{name: "high and zero", e: "500", w: "0", earlier: normal, occupied: true, want: "usage_high usage_zero"},
	}
	for _, c := range cases {
		r := past("2026-11", c.e, c.w)
		if c.name == "a rollover's usage" {
			r.Electricity = ReadingPart{Previous: q("9990"), Current: q("15"), Rollover: true}
			r.Electricity.Usage = Usage(r.Electricity.Previous, r.Electricity.Current, true) // 25: above twice the median of 12
		}
		got := Flag(r, c.earlier, c.occupied)
		if got == nil || strings.Join(got, " ") != c.want {
			t.Errorf("%s: %#v, want %q", c.name, got, c.want)
		}
	}
	// Flat water is judged on its meter.
	flat := Property{ElectricityRate: 700, WaterBilling: WaterFlatPerRoom, WaterFlatAmount: new(int64(15_000))}
	room := Room{ID: "room_1", PropertyID: "prop_1", Number: "101", Status: RoomOccupied}
	r, err := NewReading(ReadingSource{Room: room, Property: flat, Readings: []Reading{{ID: "mrd_oct", Month: "2026-10",
		Electricity: ReadingPart{Current: q("1200")}, Water: WaterPart{ReadingPart: ReadingPart{Current: q("340")}}}},
		Month: "2026-11", Electricity: part("", "1300", false), Water: part("", "340", false)}, now)
	if err != nil || strings.Join(r.Flags, " ") != "usage_zero" {
		t.Errorf("flat water that did not move: %v %v", r.Flags, err)
	}
	// None is [] in JSON, never null.
	for _, f := range []UsageFlags{nil, {}} {
		if b, _ := json.Marshal(Reading{Flags: f}); !strings.Contains(string(b), `"flags":[]`) {
			t.Errorf("no flags written %s", b)
		}
	}
}

// A batch of readings is an array of 1 to 500 items.
func TestCheckReadingBatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		array bool
		n     int
		ok    bool
	}{{true, 1, true}, {true, 500, true}, {true, 0, false}, {true, 501, false}, {false, 1, false}} {
		err := CheckReadingBatch(c.array, c.n)
		if e, _ := AsError(err); (err == nil) != c.ok || err != nil && (e.Code != "invalid_parameter" || e.Param != "readings") {
			t.Errorf("array %v of %d: %v", c.array, c.n, err)
		}
	}
}
