package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rentapi/internal/webhook"
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
	var g webhook.Guard
	for _, u := range hostile {
		if got, err := g.Check(u); err == nil {
			t.Errorf("Check(%q) = %q, want refused", u, got)
		}
	}
	if len(hostile) < 30 {
		t.Fatalf("only %d hostile URLs", len(hostile))
	}
}

func TestCheckAdmitsPublicURLs(t *testing.T) {
	var g webhook.Guard
	for _, u := range []string{
		"https://hooks.example.com/webhook",
		"https://hooks.example.com:8443/rentapi?source=rentapi",
		"https://93.184.215.14/hook",
		"https://[2606:4700:4700::1111]/hook",
		"https://xn--12c1fe0br.xn--o3cw4h/hook", // ไทย.ไทย in punycode
	} {
		if _, err := g.Check(u); err != nil {
			t.Errorf("Check(%q): %v", u, err)
		}
	}
	// Loopback receivers only when the operator allows them.
	lo := webhook.Guard{AllowLoopback: true}
	for _, u := range []string{"http://127.0.0.1:9000/hook", "https://[::1]:9000/hook"} {
		if _, err := lo.Check(u); err != nil {
			t.Errorf("with loopback allowed, Check(%q): %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1/hook", "http://hooks.example.com/hook", "https://169.254.169.254/"} {
		if _, err := lo.Check(u); err == nil {
			t.Errorf("with loopback allowed, Check(%q) passed", u)
		}
	}
}

func TestPublic(t *testing.T) {
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

// dnsServer answers every A query with addr and every other query with no
// records, over real DNS on UDP: the outside edge a rebinding attacker
// controls.
func dnsServer(t *testing.T, addr netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			// The question: labels up to a zero byte, then type and class.
			end := 12
			for end < n && buf[end] != 0 {
				end += int(buf[end]) + 1
			}
			end += 5
			if end > n {
				continue
			}
			qtype := binary.BigEndian.Uint16(buf[end-4:])
			resp := append([]byte{}, buf[:end]...)
			resp[2], resp[3] = 0x81, 0x80 // response, recursion desired and available, no error
			binary.BigEndian.PutUint16(resp[6:], 0)
			binary.BigEndian.PutUint16(resp[8:], 0)
			binary.BigEndian.PutUint16(resp[10:], 0)
			if qtype == 1 {
				binary.BigEndian.PutUint16(resp[6:], 1)
				a := addr.As4()
				resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4)
				resp = append(resp, a[:]...)
			}
			pc.WriteTo(resp, from)
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// A name that passes registration but resolves to a loopback address (DNS
// rebinding) is refused when the delivery connects: the receiver listening
// there never sees a request.
func TestSendRefusesPrivateAddressAfterResolution(t *testing.T) {
	var hits atomic.Int32
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer recv.Close()
	_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
	url := "https://rebind.attacker-controlled.com:" + port + "/hook"
	var g webhook.Guard
	if _, err := g.Check(url); err != nil {
		t.Fatalf("the name should pass registration: %v", err)
	}
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
	var g webhook.Guard
	lo := webhook.Guard{AllowLoopback: true}
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
		{g, "https://10.0.0.5/hook", ""},
		{g, "http://hooks.example.com/hook", ""},
		{lo, "http://10.0.0.1/hook", ""},
	} {
		_, err := tc.g.Check(tc.url)
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
