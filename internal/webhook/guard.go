// Package webhook sends events to the endpoints developers register: it
// signs each delivery, refuses every address outside the public internet
// (when the URL is registered, and again on every connection, after DNS
// resolution), and reports what the receiver answered.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Guard decides which addresses deliveries may reach. The zero value admits
// only public internet addresses over HTTPS, and resolves names with the
// system's resolver.
type Guard struct {
	// AllowLoopback admits http:// and https:// URLs on loopback addresses,
	// for receivers on the developer's own machine and for tests. The
	// operator turns it on with --webhook-allow-loopback; never in production.
	AllowLoopback bool
	// Resolver looks up a URL's host name when the URL is registered, so
	// that a name of a private address is refused then rather than failing
	// at every delivery; nil is the system's. Deliveries resolve again
	// through their Sender's own resolver, and the guard judges the address
	// they connect to. Tests give one that asks their own DNS server.
	Resolver *net.Resolver
}

// ResolveTimeout bounds the DNS lookup of a URL being registered.
const ResolveTimeout = 5 * time.Second

// ErrRefused marks an address the guard does not let a delivery reach.
var ErrRefused = errors.New("webhook: address refused")

// blocked are the IP ranges that are not the public internet: IANA's
// special-purpose registries, plus ranges whose addresses embed another
// address (checked separately below).
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		// IPv4
		"0.0.0.0/8",       // "this network", unspecified
		"10.0.0.0/8",      // private
		"100.64.0.0/10",   // carrier-grade NAT
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local, cloud metadata
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"192.31.196.0/24", // AS112
		"192.52.193.0/24", // AMT
		"192.88.99.0/24",  // 6to4 relay anycast
		"192.168.0.0/16",  // private
		"192.175.48.0/24", // AS112
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, broadcast
		// IPv6
		"::/96",           // unspecified, loopback, IPv4-compatible
		"::ffff:0:0/96",   // IPv4-mapped (unmapped before the check)
		"::ffff:0:0:0/96", // IPv4-translated
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments: Teredo, benchmarking, ORCHID
		"2001:db8::/32",   // documentation
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing SIDs
		"fc00::/7",        // unique local
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local (deprecated)
		"ff00::/8",        // multicast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
	global = netip.MustParsePrefix("2000::/3")
)

// Public reports whether addr is an address on the public internet. An
// address that embeds an IPv4 address (IPv4-mapped, NAT64, 6to4) is judged
// by the address it embeds.
func Public(addr netip.Addr) bool {
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	addr = addr.Unmap()
	if addr.Is6() {
		b := addr.As16()
		switch {
		case nat64.Contains(addr):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case sixTo4.Contains(addr):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		case !global.Contains(addr):
			return false
		}
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// allowed reports whether the guard lets a delivery connect to addr.
func (g Guard) allowed(addr netip.Addr) bool {
	if g.AllowLoopback && addr.Unmap().IsLoopback() {
		return true
	}
	return Public(addr)
}

// control is the net.Dialer hook that runs after DNS resolution, on the
// very address about to be connected: no name can resolve its way past it.
func (g Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefused, address)
	}
	if !g.allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public internet address", ErrRefused, ap.Addr())
	}
	return nil
}

// Check validates a webhook URL when it is registered: https (or http to a
// loopback address when allowed), a host that is a public IP literal or a
// public DNS name that resolves, now, only to addresses the guard allows,
// no credentials, and no number in a form that a resolver might read as an
// IP address. It returns the URL as it will be used, or an error saying
// what is wrong. A name is looked up (within ResolveTimeout) only once
// everything else holds; the address is checked again at every delivery,
// since what a name resolves to can change.
func (g Guard) Check(ctx context.Context, raw string) (string, error) {
	if len(raw) > 2048 {
		return "", errors.New("the URL is longer than 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "", errors.New("the URL must be an absolute https:// URL")
	}
	if u.User != nil {
		return "", errors.New("the URL must not carry a user name or password")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return "", errors.New("the URL must not have a #fragment")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", errors.New("the URL's port must be a number from 1 to 65535")
		}
	}
	host := u.Hostname()
	if host == "" {
		return "", errors.New("the URL has no host")
	}
	addr, literal := hostAddr(host)
	if literal && !addr.IsValid() {
		return "", errors.New("the host is an IP address in an unusual form; write it as a dotted-decimal IPv4 or a bracketed IPv6 address")
	}
	loopback := literal && g.AllowLoopback && addr.Unmap().IsLoopback()
	hint := g.localHint(host, addr, literal)
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback:
	default:
		return "", errors.New("the URL must use https://" + hint)
	}
	if literal {
		if !g.allowed(addr) {
			return "", fmt.Errorf("%s is not a public internet address (private, loopback, link-local, CGNAT, multicast, reserved or documentation addresses are refused)%s", addr, hint)
		}
		return u.String(), nil
	}
	if err := publicName(host); err != nil {
		return "", fmt.Errorf("%w%s", err, hint)
	}
	if err := g.resolve(ctx, host); err != nil {
		return "", err
	}
	return u.String(), nil
}

// CheckFunc is Check under ctx, as rental.EndpointChange.Check takes it: the
// API and the developer portal judge URLs with it alike.
func (g Guard) CheckFunc(ctx context.Context) func(string) (string, error) {
	return func(raw string) (string, error) { return g.Check(ctx, raw) }
}

// resolve looks host up and refuses it unless it has addresses and the
// guard allows every one: a delivery may connect to any of them.
func (g Guard) resolve(ctx context.Context, host string) error {
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	var dnsErr *net.DNSError
	switch {
	case err == nil && len(addrs) == 0, errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Errorf("the host name %s does not resolve: DNS has no address for it; register a name that resolves to the receiver's public address", host)
	case err != nil:
		return fmt.Errorf("the host name %s could not be resolved now (the DNS lookup failed or timed out); check the name and try again", host)
	}
	for _, a := range addrs {
		if !g.allowed(a) {
			return fmt.Errorf("the host name %s resolves to %s, which is not a public internet address (private, loopback, link-local, CGNAT, multicast, reserved or documentation addresses are refused)%s",
				host, a.Unmap(), g.localHint(a.String(), a, true))
		}
	}
	return nil
}

// localHint is what a refusal of a receiver on the developer's own machine
// adds: how such a receiver can be admitted, since trying one locally is the
// usual reason for registering it. Other URLs get no hint.
func (g Guard) localHint(host string, addr netip.Addr, literal bool) string {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	localName := !literal && (name == "localhost" || strings.HasSuffix(name, ".localhost"))
	switch {
	case literal && addr.IsValid() && addr.Unmap().IsLoopback() && !g.AllowLoopback:
		return "; for a receiver on your own machine, the service must be started with --webhook-allow-loopback (local development only)"
	case localName && !g.AllowLoopback:
		return "; for a receiver on your own machine, start the service with --webhook-allow-loopback (local development only) and register http://127.0.0.1:PORT/..."
	case localName:
		return "; --webhook-allow-loopback admits loopback addresses, not names: register http://127.0.0.1:PORT/... or http://[::1]:PORT/..."
	}
	return ""
}

// hostAddr reads host as an IP address. literal reports whether the host is
// meant as an address at all: a standard form (addr valid), or one of the
// numeric forms inet_aton accepts, such as 2130706433, 0x7f000001, 0177.1
// or 127.1 (addr invalid, so the caller refuses it).
func hostAddr(host string) (addr netip.Addr, literal bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, true
		}
		return a, true
	}
	if strings.Contains(host, ":") || strings.Contains(host, "%") {
		return netip.Addr{}, true
	}
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 0, 32); err != nil {
			return netip.Addr{}, false
		}
	}
	return netip.Addr{}, true
}

// internalSuffixes are names that resolve only inside a network.
var internalSuffixes = []string{"localhost", "local", "localdomain", "internal", "intranet", "lan", "home", "corp", "home.arpa", "test", "invalid", "example", "onion", "in-addr.arpa", "ip6.arpa"}

// publicName checks a DNS name: letters, digits and hyphens in labels of up
// to 63 characters, at least two labels, a top-level label that is not
// numeric, and not a name reserved for private use.
func publicName(host string) error {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if len(name) > 253 {
		return errors.New("the host name is longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return errors.New("the host must be a public, fully qualified name such as hooks.example.com")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return errors.New("the host name is not a valid DNS name")
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return errors.New("the host name is not a valid DNS name (use the punycode form of an international name)")
			}
		}
	}
	if _, err := strconv.ParseUint(labels[len(labels)-1], 0, 64); err == nil {
		return errors.New("the host name ends in a number; write an IP address in dotted-decimal form")
	}
	for _, s := range internalSuffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return fmt.Errorf("%s is a private or reserved name", host)
		}
	}
	return nil
}

// dialer connects only to addresses the guard allows.
func (g Guard) dialer(resolver *net.Resolver) *net.Dialer {
	return &net.Dialer{Timeout: Timeout, Control: g.control, Resolver: resolver}
}
