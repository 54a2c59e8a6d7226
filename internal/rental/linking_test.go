package rental

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// A redirect URI is matched byte for byte: every near miss is refused.
func TestRedirectAllowedExactly(t *testing.T) {
	t.Parallel()
	registered := []string{"https://app.example.com/callback", "http://localhost:3000/cb?tenant=7"}
	cases := map[string]bool{
		"https://app.example.com/callback":         true,
		"http://localhost:3000/cb?tenant=7":        true,
		"https://app.example.com/callback/":        false,
		"https://app.example.com:444/callback":     false,
		"https://APP.example.com/callback":         false,
		"https://app.example.com/Callback":         false,
		"https://app.example.com/callback?x=1":     false,
		"https://app.example.com/callback#x":       false,
		"http://app.example.com/callback":          false,
		"https://app.example.com.evil.io/callback": false,
		"http://localhost:3000/cb":                 false,
		"http://localhost:3000/cb?tenant=7&x=1":    false,
		"":                                         false,
	}
	for uri, want := range cases {
		if got := RedirectAllowed(registered, uri); got != want {
			t.Errorf("%q: %v, want %v", uri, got, want)
		}
	}
}

// A state is 8 to 512 printable ASCII characters without spaces.
func TestCheckStateLength(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"":                        false,
		"1234567":                 false,
		"12345678":                true,
		strings.Repeat("s", 512):  true,
		strings.Repeat("s", 513):  false,
		"has space":               false,
		"tab\there!":              false,
		"ไทยไทยไทย":               false,
		"a~!@#$%^&*()_+{}|:<>?-=": true,
	}
	for state, ok := range cases {
		if err := CheckState(state); (err == nil) != ok {
			t.Errorf("%q: %v", state, err)
		}
	}
}

// The answer's parameters are added to the registered URI's own query,
// encoded; the URI is otherwise kept as registered.
func TestConnectReturn(t *testing.T) {
	t.Parallel()
	approve := url.Values{"account_id": {"acct_abc"}, "state": {"a b&c=d/é"}}
	cases := []struct{ uri, want string }{
		{"https://app.example.com/cb", "https://app.example.com/cb?account_id=acct_abc&state=a+b%26c%3Dd%2F%C3%A9"},
		{"https://app.example.com/cb?tenant=7", "https://app.example.com/cb?tenant=7&account_id=acct_abc&state=a+b%26c%3Dd%2F%C3%A9"},
		{"https://app.example.com/cb?", "https://app.example.com/cb?account_id=acct_abc&state=a+b%26c%3Dd%2F%C3%A9"},
		{"https://app.example.com/cb?a=%20b&", "https://app.example.com/cb?a=%20b&account_id=acct_abc&state=a+b%26c%3Dd%2F%C3%A9"},
		{"http://127.0.0.1:8080/back/", "http://127.0.0.1:8080/back/?account_id=acct_abc&state=a+b%26c%3Dd%2F%C3%A9"},
	}
	for _, c := range cases {
		got, err := ConnectReturn(c.uri, approve)
		if err != nil || got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.uri, got, err, c.want)
		}
		u, _ := url.Parse(got)
		if u.Query().Get("state") != "a b&c=d/é" || u.Query().Get("account_id") != "acct_abc" {
			t.Errorf("%s: the parameters do not read back: %v", c.uri, u.Query())
		}
	}
	deny, _ := ConnectReturn("https://app.example.com/cb", url.Values{"error": {"access_denied"}, "state": {"s1234567"}})
	if deny != "https://app.example.com/cb?error=access_denied&state=s1234567" {
		t.Errorf("deny: %s", deny)
	}
	if _, err := ConnectReturn("https://app.example.com/cb#top", approve); err == nil {
		t.Error("a fragment was accepted")
	}
}

// Only a plain origin is written into the consent page's policy.
func TestRedirectOrigin(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://app.example.com/cb?x=1":       "https://app.example.com",
		"http://localhost:3000/cb":             "http://localhost:3000",
		"https://App.Example.com:8443/a/b":     "https://App.Example.com:8443",
		"https://a.example.com;script-src*/cb": "",
		"https://a.example.com:/cb":            "",
		"https://[::1]:8443/cb":                "",
		"javascript:alert(1)":                  "",
		"ftp://files.example.com/":             "",
		"/relative":                            "",
	}
	for uri, want := range cases {
		got, ok := RedirectOrigin(uri)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", uri, got, ok, want)
		}
	}
}

// A landlord may move to any plan the data fits: a smaller plan than the
// properties or rooms kept is refused, naming what is over.
func TestCheckPlanChange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		to    LandlordPlan
		usage Capacity
		code  string
		says  string
	}{
		{LandlordFree, Capacity{}, "", ""},
		{LandlordFree, Capacity{Properties: 1, Rooms: 30}, "", ""},
		{LandlordFree, Capacity{Properties: 2, Rooms: 8}, "plan_too_small", "2 properties (it allows 1)"},
		{LandlordFree, Capacity{Properties: 1, Rooms: 31}, "plan_too_small", "31 rooms (it allows 30)"},
		{LandlordStandard, Capacity{Properties: 11, Rooms: 301}, "plan_too_small", "11 properties (it allows 10) and 301 rooms (it allows 300)"},
		{LandlordStandard, Capacity{Properties: 10, Rooms: 300}, "", ""},
		{LandlordPro, Capacity{Properties: 500, Rooms: 20000}, "", ""},
		{LandlordPro, Capacity{Properties: 501}, "plan_too_small", "501 properties"},
		{"gold", Capacity{}, "invalid_parameter", "gold"},
	}
	for _, c := range cases {
		err := CheckPlanChange(c.to, c.usage)
		if code(err) != c.code || (err != nil && !strings.Contains(err.Error(), c.says)) {
			t.Errorf("%s with %+v: %v, want %s saying %q", c.to, c.usage, err, c.code, c.says)
		}
	}
	for _, p := range LandlordPlans {
		if !p.Valid() || p.QRPayments() == (p == LandlordFree) {
			t.Errorf("plan %s", p)
		}
	}
	if got := []Capacity{LandlordFree.Capacity(), LandlordStandard.Capacity(), LandlordPro.Capacity()}; got[0] != (Capacity{1, 30}) ||
		got[1] != (Capacity{10, 300}) || got[2] != (Capacity{500, 20000}) {
		t.Errorf("plan limits %v", got)
	}
}

// Ten wrong codes an hour from the first; then every code waits for the
// window's end, and the first wrong code after it starts a new window.
func TestCodeTries(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	var c CodeTries
	if c.Blocked(start) {
		t.Fatal("a new user is blocked")
	}
	for i := range MaxWrongCodes {
		at := start.Add(time.Duration(i) * time.Minute)
		if c.Blocked(at) {
			t.Fatalf("blocked before wrong code %d", i+1)
		}
		c = c.AfterWrong(at)
	}
	if c.Wrong != MaxWrongCodes || !c.WindowStart.Equal(start) {
		t.Fatalf("after ten: %+v", c)
	}
	for _, d := range []time.Duration{10 * time.Minute, 59*time.Minute + 59*time.Second} {
		if !c.Blocked(start.Add(d)) {
			t.Errorf("not blocked %v after the first wrong code", d)
		}
	}
	if c.Blocked(start.Add(time.Hour)) {
		t.Error("still blocked once the hour is over")
	}
	next := c.AfterWrong(start.Add(time.Hour))
	if next.Wrong != 1 || !next.WindowStart.Equal(start.Add(time.Hour)) || next.Blocked(start.Add(time.Hour)) {
		t.Errorf("a wrong code after the window: %+v", next)
	}
	if c := (CodeTries{WindowStart: start, Wrong: 3}).AfterWrong(start.Add(2 * time.Hour)); c.Wrong != 1 {
		t.Errorf("an old window counted on: %+v", c)
	}
}
