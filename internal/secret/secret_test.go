package secret

import (
	"bytes"
	"testing"
)

// SealFixed seals the same value in the same context to the same string,
// which Open opens; another value or context seals to another string, and
// Open refuses a sealed value in any other context or altered. Seal's
// strings differ every time and open all the same.
func TestSealFixed(t *testing.T) {
	t.Parallel()
	s, err := New("a server secret of at least thirty-two characters")
	if err != nil {
		t.Fatal(err)
	}
	value, ctx := []byte("position 1700000000000 bill_abc"), []byte("list bills for acct_1")
	a, b := s.SealFixed(value, ctx), s.SealFixed(value, ctx)
	if a != b {
		t.Fatalf("the same value sealed twice: %q and %q", a, b)
	}
	if got, err := s.Open(a, ctx); err != nil || !bytes.Equal(got, value) {
		t.Fatalf("Open: %q %v", got, err)
	}
	if s.SealFixed([]byte("position 1700000000000 bill_abd"), ctx) == a || s.SealFixed(value, []byte("list bills for acct_2")) == a {
		t.Fatal("another value or context sealed to the same string")
	}
	if _, err := s.Open(a, []byte("list bills for acct_2")); err != ErrTampered {
		t.Fatalf("Open in another context: %v", err)
	}
	altered := []byte(a)
	altered[len(altered)/2] ^= 1
	if _, err := s.Open(string(altered), ctx); err != ErrTampered {
		t.Fatalf("Open altered: %v", err)
	}
	other, _ := New("another server secret of at least thirty-two chars")
	if other.SealFixed(value, ctx) == a {
		t.Fatal("another secret sealed to the same string")
	}
	if x, y := s.Seal(value, ctx), s.Seal(value, ctx); x == y {
		t.Fatal("Seal gave the same string twice")
	} else if got, err := s.Open(x, ctx); err != nil || !bytes.Equal(got, value) {
		t.Fatalf("Open of Seal: %q %v", got, err)
	}
}
