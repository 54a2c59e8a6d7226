package store

import "testing"

// TestTurnsPredict: what a landlord's next writer predicts from the
// commits of this process, those answered and those on their way (see
// Tx.Commit), through overlapping commits, a failed one, and a clock reset
// committed while a commit made at the old offset is still on its way.
func TestTurnsPredict(t *testing.T) {
	var tr turns
	expect := func(what string, clock, offset int64) {
		t.Helper()
		if c, o, _ := tr.predict("l", 0); c != clock || o != offset {
			t.Fatalf("%s: predicts %d at offset %d, want %d at %d", what, c, o, clock, offset)
		}
	}
	const x = 30 * 24 * 3600 * 1000 // a sandbox's clock, a month ahead
	tr.committed("l", 100+x, x)
	expect("after a commit", 100+x, x)
	if !tr.committing("l", 110+x, x) {
		t.Fatal("a commit at the noted offset is not noted")
	}
	expect("while a commit is on its way", 110+x, x)
	tr.committing("l", 120+x, x)
	expect("while two are", 120+x, x)
	tr.settled("l", 110+x, x, true)
	expect("once the first is answered", 120+x, x)
	tr.settled("l", 120+x, x, false)
	expect("once the second failed", 110+x, x)

	// A commit at offset x is on its way when the next writer resets the
	// clock to real time: the reset's own commit is not noted ahead (its
	// offset is new), and once committed it stands, even when the earlier
	// commit is answered after it.
	tr.committing("l", 130+x, x)
	if tr.committing("l", 50, 0) {
		t.Fatal("a commit at a new offset was noted before it was answered")
	}
	tr.committed("l", 50, 0)
	expect("after the reset", 50, 0)
	tr.settled("l", 130+x, x, true)
	expect("after the earlier commit was answered", 50, 0)
}
