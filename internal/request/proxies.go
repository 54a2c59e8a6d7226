package request

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies in front of the service (a TLS
// terminator, a load balancer), by address range: only a request that
// comes from one of them is believed about who sent it (X-Forwarded-For).
// Without them, every client behind one proxy would share one address, and
// its limits (failed keys, sign-ins) would be everyone's.
type Proxies []netip.Prefix

// ParseProxies reads a comma-separated list of addresses and ranges
// ("10.0.0.0/8, 192.0.2.7").
func ParseProxies(s string) (Proxies, error) {
	var out Proxies
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
			}
			f = netip.PrefixFrom(a, a.BitLen()).String()
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (p Proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, pr := range p {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP is the address a request comes from: the peer, unless the peer
// is a trusted proxy; then the nearest address in X-Forwarded-For that is
// not one (the proxies append, so what is left of it could be forged).
func (p Proxies) ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || len(p) == 0 || !p.trusted(peer) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return host // a hop that is no address: believe no further
		}
		if !p.trusted(a) {
			return a.Unmap().String()
		}
		host = a.Unmap().String()
	}
	return host
}
