package store

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"rentapi/internal/database"
)

// What is kept of rooms stays within keptRoomsMax, counted right: a
// landlord's rooms past the bound push the other landlords' out, then its
// own; a write that found none of a landlord's rooms ends what was kept of
// it.
func TestKeptRoomsBound(t *testing.T) {
	var k keptRooms
	rooms := func(prefix string, n int) map[string]*readingRoom {
		m := make(map[string]*readingRoom, n)
		for i := range n {
			m[fmt.Sprintf("%s%d", prefix, i)] = &readingRoom{from: "2026-01"}
		}
		return m
	}
	check := func(want int, landlords ...string) {
		t.Helper()
		n := 0
		for _, l := range k.landlords {
			n += len(l.rooms)
		}
		if k.count != n || n != want || len(k.landlords) != len(landlords) {
			t.Fatalf("count %d, rooms %d in %d landlords; want %d in %v", k.count, n, len(k.landlords), want, landlords)
		}
		for _, l := range landlords {
			if k.landlords[l] == nil {
				t.Fatalf("%s is not kept", l)
			}
		}
	}
	keep := func(landlord string, version int64, r map[string]*readingRoom) {
		k.keep(&keptReadings{landlordID: landlord, version: version, from: k.landlords[landlord], rooms: r}, database.Work{})
	}
	keep("a", 1, rooms("a", 600))
	keep("b", 1, rooms("b", 300))
	check(900, "a", "b")
	keep("b", 2, rooms("a", 10)) // the same IDs as a's count once each
	keep("b", 3, rooms("a", 10))
	check(910, "a", "b")
	keep("b", 4, rooms("c", 300)) // past the bound: a goes
	check(610, "b")
	keep("b", 5, rooms("d", 500)) // past it alone: b goes too
	check(0)
	keep("c", 1, rooms("e", 5))
	keep("c", 3, rooms("f", 5)) // not after version 1: starts over
	check(5, "c")
	keep("c", 4, nil)
	check(0)
}

// A kept room holds the readings its next month needs, in an array they
// fill (an append copies them), with strings of their own once owned, not
// the text they were read from.
func TestKeptRoomCut(t *testing.T) {
	var text strings.Builder
	for m := range 17 { // 2025-01 to 2026-05
		fmt.Fprintf(&text, "mrd_%02d %04d-%02d 1 2 0 3 4 0 ", m, 2025+m/12, m%12+1)
	}
	read, err := parseRoomReadings(strings.TrimSuffix(text.String(), " "))
	if err != nil {
		t.Fatal(err)
	}
	// The text read begins with the first reading's ID.
	start := uintptr(unsafe.Pointer(unsafe.StringData(read[0].ID)))
	r := &readingRoom{from: "2024-07", readings: read}
	r.own()
	c := r.cut()
	if len(c.readings) != cap(c.readings) {
		t.Fatalf("%d readings kept in an array of %d", len(c.readings), cap(c.readings))
	}
	inText := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= start && p < start+uintptr(text.Len())
	}
	var months []string
	for _, r := range c.readings {
		months = append(months, r.Month)
		if inText(r.ID) || inText(r.Month) {
			t.Fatalf("%s of %s is still part of the text read", r.ID, r.Month)
		}
	}
	want := "2025-10 2025-11 2025-12 2026-01 2026-02 2026-03 2026-04 2026-05"
	if c.from != "2025-11" || strings.Join(months, " ") != want {
		t.Fatalf("from %s, months %v; want from 2025-11, months %s", c.from, months, want)
	}
}
