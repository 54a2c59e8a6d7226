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
	a, ha := NewToken()
	b, _ := NewToken()
	if len(a) < 50 || a == b || ha != HashToken(a) || strings.Contains(ha, a) {
		t.Fatalf("%s %s %s", a, b, ha)
	}
}

// Ten tries of an email (from any address) in 15 minutes: the next waits,
// tries sent together included (each is counted before its password is
// checked). Ten failures from an address (for any email): its next try
// waits. Sign-ups: ten per address.
func TestThrottle(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	th := Throttle{Buckets: bucket.NewMemory()}
	for i := range 10 {
		if _, err := th.Begin(ctx, "a@example.com", fmt.Sprintf("10.0.0.%d", i), now); err != nil {
			t.Fatalf("try %d: %v", i+1, err)
		}
	}
	if wait, err := th.Begin(ctx, "A@example.com", "10.0.1.1", now); err != ErrThrottled || wait <= 0 {
		t.Fatalf("11th try of the email: %v %v", wait, err)
	}
	if _, err := th.Begin(ctx, "b@example.com", "10.0.1.1", now); err != nil {
		t.Fatalf("another email: %v", err)
	}
	if _, err := th.Begin(ctx, "a@example.com", "10.0.1.1", now.Add(15*time.Minute)); err != nil {
		t.Fatalf("15 minutes later: %v", err)
	}
	for range 10 {
		th.Failed(ctx, "10.0.0.7", now)
	}
	if _, err := th.Begin(ctx, "new@example.com", "10.0.0.7", now); err != ErrThrottled {
		t.Fatalf("the address: %v", err)
	}
	for i := range 10 {
		if _, err := th.SignUp(ctx, "10.0.2.2", now); err != nil {
			t.Fatalf("sign-up %d: %v", i+1, err)
		}
	}
	if _, err := th.SignUp(ctx, "10.0.2.2", now); err != ErrThrottled {
		t.Fatalf("11th sign-up: %v", err)
	}
}
