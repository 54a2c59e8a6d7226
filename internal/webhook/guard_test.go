package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rentapi/internal/webhook"
	"rentapi/internal/webhook/webhooktest"
)

// Every one of these is refused when it is registered.
var hostile = []string{
	"http://hooks.example.com/webhook",                // not https
	"ftp://hooks.example.com/webhook",                 // not https
	"https://127.0.0.1/hook",                          // loopback
	"https://127.1/hook",                              // short loopback form
	"https://0x7f000001/hook",                         // hex loopback
	"https://2130706433/hook",                         // decimal loopback
	"https://0177.0.0.1/hook",                         // octal loopback
	"https://0x7f.0.0.1/hook",                         // mixed hex
	"https://[::1]/hook",                              // IPv6 loopback
	"https://[::ffff:127.0.0.1]/hook",                 // IPv4-mapped loopback
	"https://[::ffff:7f00:1]/hook",                    // IPv4-mapped loopback, hex
	"https://[::127.0.0.1]/hook",                      // IPv4-compatible
	"https://0.0.0.0/hook",                            // unspecified
	"https://[::]/hook",                               // unspecified
	"https://10.0.0.5/hook",                           // RFC 1918
	"https://172.16.3.4/hook",                         // RFC 1918
	"https://192.168.1.1/hook",                        // RFC 1918
	"https://169.254.169.254/latest/meta-data/",       // cloud metadata, link-local
	"https://[fe80::1]/hook",                          // IPv6 link-local
	"https://[fe80::1%25eth0]/hook",                   // zoned
	"https://[fd00::1]/hook",                          // ULA
	"https://100.64.0.1/hook",                         // CGNAT
	"https://224.0.0.1/hook",                          // multicast
	"https://[ff02::1]/hook",                          // IPv6 multicast
	"https://255.255.255.255/hook",                    // broadcast
	"https://198.18.0.1/hook",                         // benchmarking
	"https://192.0.2.10/hook",                         // documentation
	"https://[2001:db8::1]/hook",                      // documentation
	"https://[64:ff9b::a00:1]/hook",                   // NAT64 of 10.0.0.1
	"https://[64:ff9b::7f00:1]/hook",                  // NAT64 of 127.0.0.1
	"https://[2002:7f00:1::1]/hook",                   // 6to4 of 127.0.0.1
	"https://[2002:a9fe:a9fe::1]/hook",                // 6to4 of 169.254.169.254
	"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", // Teredo
	"https://localhost/hook",                          // internal name
	"https://api.localhost/hook",                      // internal name
	"https://metadata.google.internal/computeMetadata/v1/",
	"https://printer.local/hook",
	"https://intranet/hook",                    // single label
	"https://user:pass@hooks.example.com/hook", // credentials
	"https://hooks.example.com:99999/hook",     // bad port
	"https://hooks..example.com/hook",          // empty label
	"https://-bad.example.com/hook",
	"https:///hook",             // no host
	"hooks.example.com/webhook", // not absolute
	"https://1.1.1.1.1/hook",    // five numbers: not a name, not an address
	"https://hooks.example.com/hook#frag",
	"javascript:alert(1)",
}

func TestCheckRefusesHostileURLs(t *testing.T) {
	t.Parallel()
	// Every name resolves to a public address: each refusal is the URL's own.
	g := webhook.Guard{Resolver: dnsServer(t, webhooktest.PublicAddr)}
	for _, u := range hostile {
		if got, err := g.Check(t.Context(), u); err == nil {
			t.Errorf("Check(%q) = %q, want refused", u, got)
		}
	}
	if len(hostile) < 30 {
		t.Fatalf("only %d hostile URLs", len(hostile))
	}
}

func TestCheckAdmitsPublicURLs(t *testing.T) {
	t.Parallel()
	g := webhook.Guard{Resolver: dnsServer(t, webhooktest.PublicAddr)}
	for _, u := range []string{
		"https://hooks.example.com/webhook",
		"https://hooks.example.com:8443/rentapi?source=rentapi",
		"https://93.184.215.14/hook",
		"https://[2606:4700:4700::1111]/hook",
		"https://xn--12c1fe0br.xn--o3cw4h/hook", // ไทย.ไทย in punycode
	} {
		if _, err := g.Check(t.Context(), u); err != nil {
			t.Errorf("Check(%q): %v", u, err)
		}
	}
	// Loopback receivers only when the operator allows them.
	lo := webhook.Guard{AllowLoopback: true, Resolver: g.Resolver}
	for _, u := range []string{"http://127.0.0.1:9000/hook", "https://[::1]:9000/hook"} {
		if _, err := lo.Check(t.Context(), u); err != nil {
			t.Errorf("with loopback allowed, Check(%q): %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1/hook", "http://hooks.example.com/hook", "https://169.254.169.254/"} {
		if _, err := lo.Check(t.Context(), u); err == nil {
			t.Errorf("with loopback allowed, Check(%q) passed", u)
		}
	}
}

func TestPublic(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true, "::ffff:8.8.8.8": true, "64:ff9b::808:808": true,
		"2002:808:808::1": true, "127.0.0.1": false, "10.1.2.3": false, "::ffff:10.1.2.3": false, "100.127.255.255": false,
		"169.254.169.254": false, "fd12::1": false, "::1": false, "2001:db8::5": false, "3fff::1": false, "192.88.99.1": false,
		"240.0.0.1": false,
	} {
		if got := webhook.Public(netip.MustParseAddr(s)); got != want {
			t.Errorf("Public(%s) = %v, want %v", s, got, want)
		}
	}
}

// dnsServer answers every name with addr, over real DNS on UDP: the outside
// edge a rebinding attacker controls.
func dnsServer(t *testing.T, addr netip.Addr) *net.Resolver {
	t.Helper()
	return webhooktest.Resolver(t, map[string][]netip.Addr{"*": {addr}})
}

// A name that passes registration but resolves to a loopback address (DNS
// rebinding) is refused when the delivery connects: the receiver listening
// there never sees a request.
func TestSendRefusesPrivateAddressAfterResolution(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer recv.Close()
	_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
	url := "https://rebind.attacker-controlled.com:" + port + "/hook"
	// At registration the attacker's DNS answers a public address...
	if _, err := (webhook.Guard{Resolver: dnsServer(t, webhooktest.PublicAddr)}).Check(t.Context(), url); err != nil {
		t.Fatalf("the name should pass registration: %v", err)
	}
	// ...and at delivery a private one.
	var g webhook.Guard
	for _, addr := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254"} {
		s := webhook.NewSender(g, dnsServer(t, netip.MustParseAddr(addr)))
		res := s.Send(t.Context(), webhook.Delivery{URL: url, Body: []byte(`{}`), Secrets: []string{"whsec_x"}, Now: time.Now(), Attempt: 1})
		if res.OK() || res.StatusCode != 0 || !strings.HasPrefix(res.Err, "refused") {
			t.Fatalf("resolved to %s: %+v", addr, res)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver got %d requests", hits.Load())
	}
	// The same sender with loopback allowed reaches it (so the refusal above
	// was the guard, not the test's DNS).
	s := webhook.NewSender(webhook.Guard{AllowLoopback: true}, dnsServer(t, netip.MustParseAddr("127.0.0.1")))
	res := s.Send(t.Context(), webhook.Delivery{URL: url, Body: []byte(`{}`), Secrets: []string{"whsec_x"}, Now: time.Now(), Attempt: 1})
	if res.Err == "" || !strings.Contains(res.Err, "TLS") {
		// httptest's certificate is not trusted: the connection was made and TLS refused.
		t.Fatalf("with loopback allowed: %+v", res)
	}
}

// The signature is HMAC-SHA256 over "<timestamp>.<body>", as the spec's
// verification steps compute it.
func TestSignatureHeader(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1"}`)
	got := webhook.SignatureHeader([]string{"whsec_new", "whsec_old"}, 1700000000, body)
	var want []string
	for _, s := range []string{"whsec_new", "whsec_old"} {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte("1700000000." + string(body)))
		want = append(want, "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	if got != strings.Join(want, ",") {
		t.Fatalf("got %s\nwant %s", got, strings.Join(want, ","))
	}
}

// Redirects are answers, not instructions: a 3xx is a failed attempt and
// the target is never requested.
func TestSendDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Store(true) }))
	defer target.Close()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer recv.Close()
	s := webhook.NewSender(webhook.Guard{AllowLoopback: true}, nil)
	res := s.Send(t.Context(), webhook.Delivery{URL: recv.URL, Body: []byte(`{}`), Secrets: []string{"whsec_x"}, Now: time.Now(), Attempt: 1})
	if res.OK() || res.StatusCode != http.StatusTemporaryRedirect || followed.Load() {
		t.Fatalf("%+v followed=%v", res, followed.Load())
	}
}

// A refused receiver on the developer's own machine says how to admit one;
// other refusals do not mention the operator flag.
func TestCheckLoopbackHint(t *testing.T) {
	t.Parallel()
	g := webhook.Guard{Resolver: dnsServer(t, netip.MustParseAddr("127.0.0.1"))}
	lo := webhook.Guard{AllowLoopback: true, Resolver: g.Resolver}
	for _, tc := range []struct {
		g    webhook.Guard
		url  string
		want string // "" for no hint
	}{
		{g, "http://127.0.0.1:9000/hook", "--webhook-allow-loopback"},
		{g, "https://127.0.0.1:9000/hook", "--webhook-allow-loopback"},
		{g, "http://[::1]:9000/hook", "--webhook-allow-loopback"},
		{g, "https://[::ffff:127.0.0.1]/hook", "--webhook-allow-loopback"},
		{g, "http://localhost:9000/hook", "--webhook-allow-loopback"},
		{g, "https://localhost/hook", "--webhook-allow-loopback"},
		{g, "https://api.localhost./hook", "--webhook-allow-loopback"},
		{lo, "http://localhost:9000/hook", "http://127.0.0.1:PORT/"},
		{g, "https://hooks.example.com/hook", "--webhook-allow-loopback"}, // a name of 127.0.0.1
		{g, "https://10.0.0.5/hook", ""},
		{g, "http://hooks.example.com/hook", ""},
		{lo, "http://10.0.0.1/hook", ""},
	} {
		_, err := tc.g.Check(t.Context(), tc.url)
		if err == nil {
			t.Errorf("Check(%q) (loopback allowed: %v) passed", tc.url, tc.g.AllowLoopback)
			continue
		}
		switch {
		case tc.want == "" && strings.Contains(err.Error(), "--webhook-allow-loopback"):
			t.Errorf("Check(%q): %q mentions the loopback flag", tc.url, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("Check(%q) (loopback allowed: %v): %q, want it to mention %q", tc.url, tc.g.AllowLoopback, err, tc.want)
		}
	}
}

// A name is resolved when it is registered: one with any address the guard
// would refuse at delivery, or with none, is refused then, with a reason
// that says which; a name of public addresses only passes.
func TestCheckResolvesNames(t *testing.T) {
	t.Parallel()
	addrs := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	r := webhooktest.Resolver(t, map[string][]netip.Addr{
		"hooks.example.com":    {webhooktest.PublicAddr},
		"v6.example.com":       addrs("2606:4700:4700::1111"),
		"private.example.com":  addrs("10.0.0.5"),
		"loopback.example.com": addrs("127.0.0.1"),
		"metadata.example.com": addrs("169.254.169.254"),
		"ula.example.com":      addrs("fd00::1"),
		"mapped.example.com":   addrs("::ffff:192.168.1.1"),
		"mixed.example.com":    addrs("93.184.215.14", "192.168.1.1"),
		"mixed6.example.com":   addrs("93.184.215.14", "::1"),
		"gone.example.com":     nil,
	})
	g := webhook.Guard{Resolver: r}
	for _, tc := range []struct{ url, want string }{
		{"https://private.example.com/hook", "resolves to 10.0.0.5, which is not a public internet address"},
		{"https://loopback.example.com/hook", "resolves to 127.0.0.1"},
		{"https://metadata.example.com/hook", "resolves to 169.254.169.254"},
		{"https://ula.example.com/hook", "resolves to fd00::1"},
		{"https://mapped.example.com/hook", "resolves to 192.168.1.1"},
		{"https://mixed.example.com/hook", "resolves to 192.168.1.1"},
		{"https://mixed6.example.com:8443/hook", "resolves to ::1"},
		{"https://gone.example.com/hook", "gone.example.com does not resolve"},
		{"https://unlisted.example.com/hook", "unlisted.example.com does not resolve"},
		{"https://PRIVATE.Example.com./hook", "resolves to 10.0.0.5"},
	} {
		got, err := g.Check(t.Context(), tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q) = %q, %v; want refused with %q", tc.url, got, err, tc.want)
		}
	}
	for _, u := range []string{"https://hooks.example.com/hook", "https://v6.example.com/hook", "https://HOOKS.example.com/hook"} {
		if _, err := g.Check(t.Context(), u); err != nil {
			t.Errorf("Check(%q): %v", u, err)
		}
	}
	// With loopback allowed, a name of a loopback address is a receiver on
	// the developer's machine, as its address would be; private ones are not.
	lo := webhook.Guard{AllowLoopback: true, Resolver: r}
	if _, err := lo.Check(t.Context(), "https://loopback.example.com/hook"); err != nil {
		t.Errorf("with loopback allowed: %v", err)
	}
	if _, err := lo.Check(t.Context(), "https://private.example.com/hook"); err == nil {
		t.Error("with loopback allowed, a name of 10.0.0.5 passed")
	}
	// A DNS server that cannot be reached is a refusal too, saying so.
	down := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server")
	}}
	_, err := webhook.Guard{Resolver: down}.Check(t.Context(), "https://hooks.example.com/hook")
	if err == nil || !strings.Contains(err.Error(), "could not be resolved") {
		t.Errorf("DNS down: %v", err)
	}
}
