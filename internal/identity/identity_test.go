package identity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"rentapi/internal/bucket"
)

// A password checks against its own hash only; the hash holds no password
// and differs every time (its salt); malformed hashes match nothing.
func TestPasswords(t *testing.T) {
	t.Parallel()
	h := HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h, "horse") {
		t.Fatalf("hash %s", h)
	}
	if !CheckPassword(h, "correct horse battery") || CheckPassword(h, "correct horse batterY") || CheckPassword(h, "") {
		t.Fatal("check")
	}
	if HashPassword("correct horse battery") == h {
		t.Fatal("no salt")
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$a2V5", "$argon2id$v=19$m=999999999,t=2,p=1$c2FsdA$a2V5",
		"$argon2id$v=19$m=19456,t=2,p=0$c2FsdA$a2V5", "$argon2id$v=19$m=19456,t=2,p=1$!!$a2V5"} {
		if CheckPassword(bad, "x") {
			t.Errorf("%q matched", bad)
		}
	}
}

// Tokens are long, distinct, and stored only as their hash.
func TestTokens(t *testing.T) {
	t.Parallel()
	a, ha := NewToken()
	b, _ := NewToken()
	if len(a) < 50 || a == b || ha != HashToken(a) || strings.Contains(ha, a) {
		t.Fatalf("%s %s %s", a, b, ha)
	}
}

// Ten tries of an email from one address in 15 minutes: the next from
// that address waits, tries sent together included (each is counted before
// its password is checked), while the same email from another address is
// still judged. A hundred tries of an email from all addresses together:
// the next waits, from any address. Ten failures from an address (for any
// email): its next try waits, and spends nothing of the email's budget.
// Sign-ups: ten per address. An IPv6 client counts by its /64.
func TestThrottle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	th := Throttle{Buckets: bucket.NewMemory()}
	for i := range 10 {
		if _, err := th.Begin(ctx, "a@example.com", "10.0.0.1", now); err != nil {
			t.Fatalf("try %d: %v", i+1, err)
		}
	}
	if wait, err := th.Begin(ctx, "A@example.com", "10.0.0.1", now); err != ErrThrottled || wait <= 0 {
		t.Fatalf("11th try of the email from one address: %v %v", wait, err)
	}
	if _, err := th.Begin(ctx, "a@example.com", "10.0.1.1", now); err != nil {
		t.Fatalf("the email from another address: %v", err)
	}
	if _, err := th.Begin(ctx, "b@example.com", "10.0.0.1", now); err != nil {
		t.Fatalf("another email from the address: %v", err)
	}
	if _, err := th.Begin(ctx, "a@example.com", "10.0.0.1", now.Add(15*time.Minute)); err != nil {
		t.Fatalf("15 minutes later: %v", err)
	}

	// An address with ten failures is refused before the email is counted.
	for range 10 {
		th.Failed(ctx, "10.0.0.7", now)
	}
	for range 500 {
		if _, err := th.Begin(ctx, "c@example.com", "10.0.0.7", now); err != ErrThrottled {
			t.Fatalf("the address: %v", err)
		}
	}
	// Many addresses: a hundred tries of the email in all, then none.
	for i := range 100 {
		if _, err := th.Begin(ctx, "c@example.com", fmt.Sprintf("10.1.%d.%d", i/10, i%10), now); err != nil {
			t.Fatalf("try %d of the email from many addresses: %v", i+1, err)
		}
	}
	if wait, err := th.Begin(ctx, "c@example.com", "10.2.0.1", now); err != ErrThrottled || wait <= 0 {
		t.Fatalf("101st try of the email: %v %v", wait, err)
	}

	for i := range 10 {
		if _, err := th.SignUp(ctx, "10.0.2.2", now); err != nil {
			t.Fatalf("sign-up %d: %v", i+1, err)
		}
	}
	if _, err := th.SignUp(ctx, "10.0.2.2", now); err != ErrThrottled {
		t.Fatalf("11th sign-up: %v", err)
	}
	for i := range 10 {
		th.Failed(ctx, fmt.Sprintf("2001:db8:1:2::%x", i+1), now)
	}
	if _, err := th.Begin(ctx, "d@example.com", "2001:db8:1:2:ffff::1", now); err != ErrThrottled {
		t.Fatalf("another address of the same /64: %v", err)
	}
	if _, err := th.Begin(ctx, "d@example.com", "2001:db8:1:3::1", now); err != nil {
		t.Fatalf("another /64: %v", err)
	}
}

// The limits count an IPv6 client by its /64 and an IPv4 one, mapped or
// not, by its address.
func TestAddressKey(t *testing.T) {
	t.Parallel()
	for ip, want := range map[string]string{
		"192.0.2.7":            "192.0.2.7",
		"::ffff:192.0.2.7":     "192.0.2.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2::9":      "2001:db8:1:2::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := addressKey(ip); got != want {
			t.Errorf("addressKey(%q) = %q, want %q", ip, got, want)
		}
	}
}
