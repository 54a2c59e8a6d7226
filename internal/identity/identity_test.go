package identity

import (
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

// Ten failed sign-ins of an email (from any address), or of an address
// (for any email), in 15 minutes: the next try waits.
func TestThrottle(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	th := Throttle{Buckets: bucket.NewMemory()}
	for i := range 10 {
		if _, err := th.Check(ctx, "a@example.com", "10.0.0.1", now); err != nil {
			t.Fatalf("try %d: %v", i+1, err)
		}
		th.Failed(ctx, "a@example.com", "10.0.0."+string(rune('1'+i%5)), now)
	}
	if wait, err := th.Check(ctx, "A@example.com", "10.0.0.9", now); err != ErrThrottled || wait <= 0 {
		t.Fatalf("11th try of the email: %v %v", wait, err)
	}
	if _, err := th.Check(ctx, "b@example.com", "10.0.0.9", now); err != nil {
		t.Fatalf("another email: %v", err)
	}
	if _, err := th.Check(ctx, "a@example.com", "10.0.0.9", now.Add(15*time.Minute)); err != nil {
		t.Fatalf("15 minutes later: %v", err)
	}
	for range 10 {
		th.Failed(ctx, "x"+string(rune('a'+time.Now().Nanosecond()%26))+"@example.com", "10.0.0.7", now)
	}
	if _, err := th.Check(ctx, "new@example.com", "10.0.0.7", now); err != ErrThrottled {
		t.Fatalf("the address: %v", err)
	}
}
