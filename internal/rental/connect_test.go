package rental

import (
	"slices"
	"strings"
	"testing"
)

// Redirect URIs are https, or plain http on localhost and 127.0.0.1 for
// development; nothing that could send a landlord somewhere else.
func TestCheckRedirectURIs(t *testing.T) {
	t.Parallel()
	ten := make([]string, 10)
	for i := range ten {
		ten[i] = "https://app.example.com/cb" + strings.Repeat("x", i)
	}
	cases := []struct {
		name string
		uris []string
		ok   bool
	}{
		{"none", nil, true},
		{"https", []string{"https://app.example.com/oauth/callback"}, true},
		{"https with a port and a query", []string{"https://app.example.com:8443/cb?from=rentapi"}, true},
		{"http on localhost", []string{"http://localhost/cb"}, true},
		{"http on localhost with a port", []string{"http://localhost:3000/cb"}, true},
		{"http on 127.0.0.1 with a port", []string{"http://127.0.0.1:8080/callback"}, true},
		{"ten", ten, true},
		{"eleven", append(slices.Clone(ten), "https://app.example.com/eleven"), false},
		{"2000 characters", []string{"https://app.example.com/" + strings.Repeat("a", 2000-24)}, true},
		{"2001 characters", []string{"https://app.example.com/" + strings.Repeat("a", 2001-24)}, false},
		{"http on a public host", []string{"http://app.example.com/cb"}, false},
		{"http on another loopback address", []string{"http://127.0.0.2/cb"}, false},
		{"http on ::1", []string{"http://[::1]:3000/cb"}, false},
		{"http on a name ending in localhost", []string{"http://localhost.example.com/cb"}, false},
		{"a fragment", []string{"https://app.example.com/cb#done"}, false},
		{"an empty fragment", []string{"https://app.example.com/cb#"}, false},
		{"user information", []string{"https://user:pass@app.example.com/cb"}, false},
		{"a user name", []string{"https://evil.example@app.example.com/cb"}, false},
		{"upper-case scheme", []string{"HTTPS://app.example.com/cb"}, false},
		{"another scheme", []string{"myapp://callback"}, false},
		{"javascript", []string{"javascript:alert(1)"}, false},
		{"relative", []string{"/callback"}, false},
		{"scheme-relative", []string{"//app.example.com/cb"}, false},
		{"no host", []string{"https:///cb"}, false},
		{"only a port", []string{"https://:443/cb"}, false},
		{"an empty port", []string{"http://localhost:/cb"}, false},
		{"port 0", []string{"http://localhost:0/cb"}, false},
		{"port 65536", []string{"http://localhost:65536/cb"}, false},
		{"a space", []string{"https://app.example.com/call back"}, false},
		{"not ASCII", []string{"https://app.example.com/ย้อนกลับ"}, false},
		{"a control character", []string{"https://app.example.com/cb\n"}, false},
		{"empty", []string{""}, false},
		{"twice", []string{"https://app.example.com/cb", "https://app.example.com/cb"}, false},
		{"one bad of two", []string{"https://app.example.com/cb", "http://app.example.com/cb"}, false},
	}
	for _, c := range cases {
		err := CheckRedirectURIs(c.uris)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
		if e, _ := AsError(err); err != nil && (e == nil || e.Param != "redirect_uris") {
			t.Errorf("%s: %v does not name redirect_uris", c.name, err)
		}
	}
}

// A connect request's redirect_uri is one of the registered ones byte for
// byte; every near miss is refused.
func TestRedirectAllowed(t *testing.T) {
	t.Parallel()
	registered := []string{"https://app.example.com/oauth/callback", "http://localhost:3000/cb", "https://app.example.com/cb?tenant=1"}
	cases := []struct {
		uri string
		ok  bool
	}{
		{"https://app.example.com/oauth/callback", true},
		{"http://localhost:3000/cb", true},
		{"https://app.example.com/cb?tenant=1", true},
		{"https://app.example.com/oauth/callback/", false},     // trailing slash
		{"https://app.example.com/oauth/callbac", false},       // prefix
		{"https://app.example.com:443/oauth/callback", false},  // default port written out
		{"https://app.example.com:8443/oauth/callback", false}, // other port
		{"http://localhost:3001/cb", false},                    // other port
		{"http://localhost/cb", false},                         // no port
		{"https://App.example.com/oauth/callback", false},      // host case
		{"https://app.example.com/OAuth/callback", false},      // path case
		{"HTTPS://app.example.com/oauth/callback", false},      // scheme case
		{"https://app.example.com/oauth/callback?x=1", false},  // added query
		{"https://app.example.com/oauth/callback?", false},     // empty query
		{"https://app.example.com/cb?tenant=2", false},         // other query
		{"https://app.example.com/cb", false},                  // query dropped
		{"https://app.example.com/oauth/callback#x", false},    // fragment
		{"http://app.example.com/oauth/callback", false},       // http on a public host
		{"https://app.example.com/oauth/%63allback", false},    // percent-encoded
		{"https://app.example.com.evil.example/oauth/callback", false},
		{"https://evil.example/?https://app.example.com/oauth/callback", false},
		{" https://app.example.com/oauth/callback", false},
		{"", false},
	}
	for _, c := range cases {
		if got := RedirectAllowed(registered, c.uri); got != c.ok {
			t.Errorf("%q: %v, want %v", c.uri, got, c.ok)
		}
	}
	if RedirectAllowed(nil, "https://app.example.com/oauth/callback") || RedirectAllowed([]string{""}, "") {
		t.Error("allowed with nothing registered")
	}
}

// A state is 8 to 512 printable ASCII characters without spaces.
func TestCheckState(t *testing.T) {
	t.Parallel()
	cases := []struct {
		state string
		code  string
	}{
		{"abcdefgh", ""},
		{"Zm9vYmFyLWJhei0xMjM0NTY3ODkw", ""},
		{`!"#$%&'()*+,-./:;<=>?@[\]^_{|}~`, ""},
		{strings.Repeat("s", 512), ""},
		{"", "parameter_missing"},
		{"abcdefg", "invalid_parameter"},
		{strings.Repeat("s", 513), "invalid_parameter"},
		{"abcd efgh", "invalid_parameter"},
		{"abcdefgh\n", "invalid_parameter"},
		{"abcdefgh\x00", "invalid_parameter"},
		{"abcdefgh\x7f", "invalid_parameter"},
		{"สวัสดีครับ", "invalid_parameter"},
	}
	for _, c := range cases {
		err := CheckState(c.state)
		if got := code(err); got != c.code {
			t.Errorf("%q: %q, want %q", c.state, got, c.code)
		}
		if e, _ := AsError(err); err != nil && (e == nil || e.Param != "state") {
			t.Errorf("%q: %v does not name state", c.state, err)
		}
	}
}

// A link's grant after an approval: what was approved, less what the
// application no longer requests; the old grant is replaced whole.
func TestReplaceGrant(t *testing.T) {
	t.Parallel()
	const (
		pr = ScopePropertiesRead
		pw = ScopePropertiesWrite
		br = ScopeBillsRead
		bw = ScopeBillsWrite
		wm = ScopeWebhooksManage
	)
	cases := []struct {
		name                string
		old                 Scopes // the grant before, for the record: it never shows through
		requested, approved Scopes
		want                Scopes
	}{
		{"first link", nil, Scopes{pr, br}, Scopes{pr, br}, Scopes{pr, br}},
		{"relink, same scopes", Scopes{pr, br}, Scopes{pr, br}, Scopes{pr, br}, Scopes{pr, br}},
		{"relink approving new scopes", Scopes{pr}, Scopes{pr, br, bw}, Scopes{pr, br, bw}, Scopes{pr, br, bw}},
		{"scopes no longer requested are dropped", Scopes{pr, pw, br}, Scopes{pr, br}, Scopes{pr, pw, br}, Scopes{pr, br}},
		{"dropped after the page was shown", Scopes{pr}, Scopes{pr}, Scopes{pr, wm}, Scopes{pr}},
		{"requested since the page was shown, not approved", Scopes{pr}, Scopes{pr, bw}, Scopes{pr}, Scopes{pr}},
		{"old scopes not approved again are gone", Scopes{pr, pw, br}, Scopes{pr, pw, br}, Scopes{br}, Scopes{br}},
		{"order and repeats do not matter", nil, Scopes{br, pr}, Scopes{br, pr, br}, Scopes{pr, br}},
		{"nothing requested", Scopes{pr}, nil, Scopes{pr}, Scopes{}},
		{"every scope", nil, AllScopes, AllScopes, AllScopes},
	}
	for _, c := range cases {
		got := ReplaceGrant(c.requested, c.approved)
		if !slices.Equal(got, c.want) || got == nil {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The consent page marks the requested scopes the current grant lacks.
func TestNewScopes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name               string
		requested, granted Scopes
		want               Scopes
	}{
		{"not linked yet: all new", Scopes{ScopeBillsRead, ScopePropertiesRead}, nil, Scopes{ScopePropertiesRead, ScopeBillsRead}},
		{"nothing new", Scopes{ScopePropertiesRead}, Scopes{ScopePropertiesRead, ScopeBillsRead}, Scopes{}},
		{"one added", Scopes{ScopePropertiesRead, ScopeWebhooksManage}, Scopes{ScopePropertiesRead}, Scopes{ScopeWebhooksManage}},
		{"write added to read", Scopes{ScopeBillsRead, ScopeBillsWrite}, Scopes{ScopeBillsRead}, Scopes{ScopeBillsWrite}},
		{"granted but no longer requested is not new", Scopes{ScopeRoomsRead}, Scopes{ScopeRoomsRead, ScopeRoomsWrite}, Scopes{}},
		{"nothing requested", nil, AllScopes, Scopes{}},
	}
	for _, c := range cases {
		if got := NewScopes(c.requested, c.granted); !slices.Equal(got, c.want) || got == nil {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Only real landlords can be linked.
func TestCheckLinkable(t *testing.T) {
	t.Parallel()
	if err := CheckLinkable(&Application{}, false); err != nil {
		t.Errorf("a real landlord: %v", err)
	}
	if got := code(CheckLinkable(&Application{}, true)); got != "invalid_parameter" {
		t.Errorf("a sandbox landlord: %q", got)
	}
}
