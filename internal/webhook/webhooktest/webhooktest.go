// Package webhooktest is the outside edge that webhook tests need and
// cannot have on a test machine: DNS. It serves names a test chooses over
// real DNS messages on a local UDP port, so the code under test resolves
// through its usual net.Resolver, the system's replaced only by where it
// sends its questions.
package webhooktest

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// PublicAddr is an address on the public internet that test names resolve
// to when they should pass the webhook guard. Tests never connect to it:
// the senders of their deliveries resolve with a resolver of their own.
var PublicAddr = netip.MustParseAddr("93.184.215.14")

// Resolver returns a resolver that asks a DNS server of the test's, which
// answers each name in names (lower case, no final dot) with its addresses,
// A and AAAA records as they are; a name listed with no address, or not
// listed, does not exist (NXDOMAIN), unless names has "*", whose addresses
// answer every name not listed. The server stops when the test ends.
func Resolver(t testing.TB, names map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := answer(buf[:n], names); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// answer is the response to one query, or nil for a message that is none.
func answer(q []byte, names map[string][]netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	// The question: labels up to a zero byte, then its type and class.
	var labels []string
	end := 12
	for end < len(q) && q[end] != 0 {
		l := int(q[end])
		if end+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[end+1:end+1+l]))
		end += l + 1
	}
	end += 5
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	addrs, listed := names[strings.ToLower(strings.Join(labels, "."))]
	if !listed {
		addrs, listed = names["*"]
	}
	resp := append([]byte{}, q[:end]...)
	resp[2], resp[3] = 0x81, 0x80 // a response, recursion desired and available
	if !listed || len(addrs) == 0 {
		resp[3] |= 3 // NXDOMAIN
	}
	binary.BigEndian.PutUint16(resp[6:], 0)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	count := uint16(0)
	for _, a := range addrs {
		var rdata []byte
		switch {
		case qtype == 1 && a.Is4():
			b := a.As4()
			rdata = b[:]
		case qtype == 28 && a.Is6():
			b := a.As16()
			rdata = b[:]
		default:
			continue
		}
		// The name as a pointer to the question's, type, class IN, a TTL
		// of 5 seconds, and the address.
		resp = append(resp, 0xc0, 0x0c, byte(qtype>>8), byte(qtype), 0, 1, 0, 0, 0, 5, 0, byte(len(rdata)))
		resp = append(resp, rdata...)
		count++
	}
	binary.BigEndian.PutUint16(resp[6:], count)
	return resp
}

// Internet is a resolver for test servers' webhook guards: every name is
// PublicAddr, but for a few that tests register to see them refused:
// private.example.com (10.0.0.5), loopback.example.com (127.0.0.1) and
// nowhere.example.com (no address).
func Internet(t testing.TB) *net.Resolver {
	t.Helper()
	return Resolver(t, map[string][]netip.Addr{
		"*":                    {PublicAddr},
		"private.example.com":  {netip.MustParseAddr("10.0.0.5")},
		"loopback.example.com": {netip.MustParseAddr("127.0.0.1")},
		"nowhere.example.com":  nil,
	})
}
