package secret

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
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

// A fingerprint is HMAC-SHA256 of the key under the fingerprint key, in
// hex: the same whether its HMAC is new or reused, from any goroutine,
// and another for another key (what the stored fingerprints of keys made
// before rest on).
func TestFingerprint(t *testing.T) {
	t.Parallel()
	s, err := New("a server secret of at least thirty-two characters")
	if err != nil {
		t.Fatal(err)
	}
	want := func(key string) string {
		m := hmac.New(sha256.New, s.fingerprint)
		m.Write([]byte(key))
		return hex.EncodeToString(m.Sum(nil))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("svc_live_%d_%d", g, i%7)
				if got := s.Fingerprint(key); got != want(key) {
					t.Errorf("Fingerprint(%q) = %s, want %s", key, got, want(key))
					return
				}
			}
		})
	}
	wg.Wait()
	if s.Fingerprint("svc_live_a") == s.Fingerprint("svc_live_b") {
		t.Fatal("two keys, one fingerprint")
	}
}
