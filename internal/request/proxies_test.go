package request

import (
	"net/http"
	"testing"
)

// Only a trusted proxy is believed about who sent a request, and only as
// far as the nearest address that is not itself a trusted proxy.
func TestProxiesClientIP(t *testing.T) {
	t.Parallel()
	trusted, err := ParseProxies("10.0.0.0/8, 192.0.2.7 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		proxies Proxies
		peer    string
		xff     []string
		want    string
	}{
		{nil, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},                       // none trusted: the peer
		{trusted, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},                   // an untrusted peer's header is ignored
		{trusted, "10.1.2.3:4000", []string{"198.51.100.1"}, "198.51.100.1"},                     // through one proxy
		{trusted, "10.1.2.3:4000", []string{"1.1.1.1, 198.51.100.1, 192.0.2.7"}, "198.51.100.1"}, // the nearest untrusted hop; the forged start is ignored
		{trusted, "10.1.2.3:4000", []string{"1.1.1.1", "198.51.100.1"}, "198.51.100.1"},          // several header lines
		{trusted, "10.1.2.3:4000", nil, "10.1.2.3"},                                              // no header: the proxy itself
		{trusted, "10.1.2.3:4000", []string{"not-an-ip, 198.51.100.1"}, "198.51.100.1"},
		{trusted, "10.1.2.3:4000", []string{"198.51.100.1, garbage"}, "10.1.2.3"}, // a bad nearest hop: believe no further
		{trusted, "[::1]:4000", []string{"2001:db8::5"}, "2001:db8::5"},
		{trusted, "10.1.2.3:4000", []string{"10.9.9.9"}, "10.9.9.9"}, // all trusted: the farthest
	}
	for _, c := range cases {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := c.proxies.ClientIP(r); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	if _, err := ParseProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad range was taken")
	}
}
