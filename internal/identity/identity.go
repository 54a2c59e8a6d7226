// Package identity is what the web pages need to know who is there: it
// hashes and checks passwords (argon2id, a salt per password), makes the
// tokens of sessions and of single-use forms and codes (of which only a
// hash is ever stored), and throttles sign-ins per email, per address and
// per pair of the two across every process through the shared token
// buckets.
package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"

	"rentapi/internal/bucket"
)

// The argon2id cost: OWASP's recommended minimum (19 MiB, 2 passes, one
// lane): slow for a guesser, quick for a person.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

// HashPassword returns the password's argon2id hash in the PHC string
// format, with a fresh random salt.
func HashPassword(password string) string {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password is the one hashed, comparing in
// constant time. A malformed hash matches nothing.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil || memory > 1<<20 || passes > 10 || threads == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// CheckDecoy spends the time of a password check, for an unknown email,
// so that it takes as long as a wrong password does: it derives a key from
// the password under a fresh salt at the cost a check of a stored hash
// runs, and forgets it. (A decoy hash made at program start did the same,
// but held argon2's 19 MiB from the start of every process.)
func CheckDecoy(password string) { HashPassword(password) }

// NewToken returns a fresh secret token (for a cookie, a form or a code)
// and the hash under which it is stored.
func NewToken() (token, hash string) {
	token = rand.Text() + rand.Text() // 2 × 26 base32 characters, 260 bits
	return token, HashToken(token)
}

// HashToken is what is stored of a token: its SHA-256, in hex. Tokens are
// random, so no salt or slow hash is needed.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// The sign-in limits, per 15 minutes (the README's "Sign-in limits"):
//   - failures from one address, whatever the email: 10;
//   - tries at one email from one address: 10;
//   - tries at one email from all addresses together: 100.
//
// A try is counted before its password is checked, so tries sent together
// cannot slip through while one is being checked, and an address already
// refused spends nothing of the email's budget. One guessing address can so
// spend at most a tenth of the email's budget: the owner, signing in from
// anywhere else, is not locked out by it; and however many addresses guess
// together, one email is guessed at most 100 times in 15 minutes.
var (
	addressFailures = bucket.Limit{Rate: 10, Per: 15 * time.Minute, Burst: 10}
	pairTries       = bucket.Limit{Rate: 10, Per: 15 * time.Minute, Burst: 10}
	emailTries      = bucket.Limit{Rate: 100, Per: 15 * time.Minute, Burst: 100}
)

// signUps is how many sign-ups an address may make: 10 per 15 minutes, so
// accounts cannot be made (nor emails probed for accounts) in bulk.
var signUps = bucket.Limit{Rate: 10, Per: 15 * time.Minute, Burst: 10}

// Throttle limits sign-in tries per email and per address, and failures
// per address, in buckets every process shares.
type Throttle struct {
	Buckets bucket.Store
}

// ErrThrottled says that an email or an address has used up its tries for
// now.
var ErrThrottled = errors.New("identity: too many failed sign-ins")

// ErrUnavailable says that the buckets could not be asked (Redis is down):
// no try is judged then, since a count of this process's own would let
// every process of the deployment allow a full budget.
var ErrUnavailable = errors.New("identity: the sign-in throttle's store is unavailable")

// Begin looks at the address's failures and, unless it is refused, takes
// one try of the email from this address and then one from the email's
// budget across all addresses, before the password is checked. It returns
// ErrThrottled, with how long until the next try, when one of them is used
// up. A try that succeeds costs one of each too; a person signs in far
// less often.
func (t Throttle) Begin(ctx context.Context, email, ip string, now time.Time) (time.Duration, error) {
	addr := addressKey(ip)
	st, err := t.Buckets.Take(ctx, "signin:ip:"+addr, addressFailures, 0, now)
	if err != nil {
		return 0, unavailable(err)
	}
	if st.Remaining < 1 {
		return addressFailures.Per / time.Duration(addressFailures.Rate), ErrThrottled
	}
	id := HashToken(strings.ToLower(email))
	for _, b := range []struct {
		name  string
		limit bucket.Limit
	}{{"signin:pair:" + id + ":" + addr, pairTries}, {"signin:email:" + id, emailTries}} {
		st, err := t.Buckets.Take(ctx, b.name, b.limit, 1, now)
		if err != nil {
			return 0, unavailable(err)
		}
		if !st.Allowed {
			return max(st.RetryAfter, time.Second), ErrThrottled
		}
	}
	return 0, nil
}

// Failed counts a failed sign-in against the address.
func (t Throttle) Failed(ctx context.Context, ip string, now time.Time) error {
	if _, err := t.Buckets.Take(ctx, "signin:ip:"+addressKey(ip), addressFailures, 1, now); err != nil {
		return unavailable(err)
	}
	return nil
}

// addressKey is a client address as the limits count it: an IPv6 address
// by its /64, the network one subscriber is given whole (so stepping
// through its addresses does not give one client more tries), an IPv4
// address (IPv4-mapped ones too) by itself.
func addressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

func unavailable(err error) error { return fmt.Errorf("%w: %w", ErrUnavailable, err) }

// SignUp takes one sign-up of the address: 10 per 15 minutes, so accounts
// cannot be made (nor emails probed for accounts) in bulk.
func (t Throttle) SignUp(ctx context.Context, ip string, now time.Time) (time.Duration, error) {
	st, err := t.Buckets.Take(ctx, "signup:ip:"+addressKey(ip), signUps, 1, now)
	if err != nil {
		return 0, unavailable(err)
	}
	if !st.Allowed {
		return max(st.RetryAfter, time.Second), ErrThrottled
	}
	return 0, nil
}
