package rental

import (
	"strings"
	"testing"
	"time"
)

// A month's reading: the meters start from the latest reading before the
// month (or 0), unless the previous values are sent; the property's rates
// and water billing are kept with it; a month read already is 409
// resource_exists naming its reading; the parts' own refusals name them.
func TestNewReading(t *testing.T) {
	t.Parallel()
	room := Room{ID: "room_1", PropertyID: "prop_1", Number: "101"}
	flat := int64(15_000)
	metered := Property{ElectricityRate: 800, WaterBilling: WaterMetered, WaterRate: 1_800}
	flatWater := Property{ElectricityRate: 700, WaterBilling: WaterFlatPerRoom, WaterRate: 0, WaterFlatAmount: &flat}
	october := &Reading{ID: "mrd_oct", Month: "2026-10", Electricity: ReadingPart{Current: q("1200")}, Water: WaterPart{ReadingPart: ReadingPart{Current: q("340")}}}
	november := &Reading{ID: "mrd_nov", Month: "2026-11", Electricity: ReadingPart{Current: q("1300")}}
	cases := []struct {
		name                     string
		prop                     Property
		latest                   *Reading
		month                    string
		elec, water              PartInput
		code, param              string
		ePrev, wPrev, eUse, wUse string
	}{
		{name: "first reading of a room", prop: metered, month: "2026-11", elec: part("", "120.5", false), water: part("", "7", false),
			ePrev: "0", wPrev: "0", eUse: "120.5", wUse: "7"},
		{name: "from the month before", prop: metered, latest: october, month: "2026-11", elec: part("", "1330", false), water: part("", "346.25", false),
			ePrev: "1200", wPrev: "340", eUse: "130", wUse: "6.25"},
		{name: "from a month long before", prop: flatWater, latest: october, month: "2027-03", elec: part("", "1200", false), water: part("", "340", false),
			ePrev: "1200", wPrev: "340", eUse: "0", wUse: "0"},
		{name: "previous values sent", prop: metered, latest: october, month: "2026-11", elec: part("1250", "1330", false), water: part("300", "310", false),
			ePrev: "1250", wPrev: "300", eUse: "80", wUse: "10"},
		{name: "a rollover", prop: metered, latest: october, month: "2026-11", elec: part("9990", "15", true), water: part("", "341", false),
			ePrev: "9990", wPrev: "340", eUse: "25", wUse: "1"},
		{name: "the month read already", prop: metered, latest: november, month: "2026-11", elec: part("", "1400", false), water: part("", "1", false),
			code: "resource_exists"},
		{name: "below the latest", prop: metered, latest: october, month: "2026-11", elec: part("", "1100", false), water: part("", "350", false),
			code: "invalid_parameter", param: "electricity.current"},
		{name: "water below the latest", prop: metered, latest: october, month: "2026-11", elec: part("", "1300", false), water: part("", "300", false),
			code: "invalid_parameter", param: "water.current"},
		{name: "no electricity", prop: metered, month: "2026-11", water: part("", "3", false), code: "parameter_missing", param: "electricity.current"},
		{name: "no water", prop: metered, month: "2026-11", elec: part("", "3", false), code: "parameter_missing", param: "water.current"},
	}
	for _, c := range cases {
		src := ReadingSource{Room: room, Property: c.prop, Latest: c.latest, Month: c.month, Electricity: c.elec, Water: c.water}
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
