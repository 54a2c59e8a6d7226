package rental

import "time"

// Limits on guessing registration codes: a LINE user may send
// MaxWrongCodes codes that name no tenant within CodeWindow of the first;
// after that, until the window ends, every code is answered that it
// should be tried later, and nothing else happens. A code has 8 characters of 31, so ten guesses
// an hour find none.
const (
	MaxWrongCodes = 10
	CodeWindow    = time.Hour
)

// CodeTries is a LINE user's count of wrong registration codes: how many
// since WindowStart (the first wrong code of the window; zero for none).
type CodeTries struct {
	WindowStart time.Time
	Wrong       int
}

// Blocked reports whether a code sent at now is refused unread: the user
// sent MaxWrongCodes wrong codes in a window that has not ended.
func (c CodeTries) Blocked(now time.Time) bool {
	return c.Wrong >= MaxWrongCodes && now.Before(c.WindowStart.Add(CodeWindow))
}

// AfterWrong is the count after a wrong code at now: one more in the
// window, or the first of a new window once the last one has ended.
func (c CodeTries) AfterWrong(now time.Time) CodeTries {
	if c.Wrong == 0 || !now.Before(c.WindowStart.Add(CodeWindow)) {
		return CodeTries{WindowStart: now, Wrong: 1}
	}
	return CodeTries{WindowStart: c.WindowStart, Wrong: c.Wrong + 1}
}

// CheckLineRegistration is the rule for linking a chat account to a
// tenant: only a current tenant registers (a moved-out tenant's code is
// void), and a registered one is left as is (done is true).
func CheckLineRegistration(t *Tenant) (done bool, err error) {
	if t.MovedOutAt != nil {
		return false, Errorf(KindConflict, "invalid_state", "Tenant %s has moved out.", t.ID)
	}
	return t.ChatRegistered, nil
}
