// Package egress decides where the calls a tenant can aim may go: a
// webhook's URL, a connection's S3 endpoint or Azure blob service, and any
// connector to come. Such a URL is chosen by an org's admin, while the
// server that calls it sits inside the operator's network: unchecked, it
// could reach the server's own database, a cloud metadata service
// (169.254.169.254) or an admin interface on the private network
// (server-side request forgery), and the errors and timings of a test
// button would map that network for the tenant.
//
// The check that matters is made by the dialer, on the address actually
// dialled after DNS, for every connection a client opens (redirects
// included): a name that resolves, or later re-resolves, to a private
// address is caught too. URL checks before that only refuse early what is
// bound to fail. Calls go through no proxy, since the dialer would then
// check the proxy's address instead of the destination's.
//
// Only public unicast addresses are reached unless the operator allows
// more (WEBHOOK_ALLOW_PRIVATE, CONNECTIONS_ALLOW_PRIVATE; see
// docs/operations.md).
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrPrivate is the dialer's refusal of an address the policy does not let
// it reach.
var ErrPrivate = errors.New("refused: the address is loopback, private, link-local or otherwise not public")

// reserved are ranges that are not public besides those netip names.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT, shared address space
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (::127.0.0.1), :: and ::1 among them
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: could reach any IPv4 address, private ones too
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local, deprecated but routed by some
}

// Public reports whether a is a public unicast address. An IPv4-mapped
// IPv6 address (::ffff:10.0.0.1) is its IPv4 address.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// Policy says which destinations that are not public calls may reach. The
// zero Policy reaches public addresses only.
type Policy struct {
	// Any reaches every address (a self-hosted install whose receivers
	// are on its own network).
	Any bool
	// Hosts are host names reached whatever they resolve to (lowercase,
	// without a trailing dot).
	Hosts []string
	// Nets are address ranges reached although not public.
	Nets []netip.Prefix
}

// ParseAllowList reads a comma-separated list of host names, addresses and
// CIDR ranges (minio.internal,10.20.0.0/16,fd00::5) into a Policy.
func ParseAllowList(s string) (Policy, error) {
	var p Policy
	for item := range strings.SplitSeq(s, ",") {
		item = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(item), "."))
		switch {
		case item == "":
			continue
		case strings.Contains(item, "/"):
			pfx, err := netip.ParsePrefix(item)
			if err != nil {
				return p, fmt.Errorf("%q is not a CIDR range such as 10.20.0.0/16", item)
			}
			p.Nets = append(p.Nets, pfx.Masked())
		default:
			if a, err := netip.ParseAddr(strings.Trim(item, "[]")); err == nil {
				p.Nets = append(p.Nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				continue
			}
			if strings.ContainsAny(item, ":@ ") || strings.Trim(item, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" {
				return p, fmt.Errorf("%q is not a host name, an address or a CIDR range", item)
			}
			p.Hosts = append(p.Hosts, item)
		}
	}
	return p, nil
}

// String lists what the policy allows beyond public addresses.
func (p Policy) String() string {
	if p.Any {
		return "any address"
	}
	out := slices.Clone(p.Hosts)
	for _, n := range p.Nets {
		out = append(out, n.String())
	}
	if len(out) == 0 {
		return "public addresses only"
	}
	return "public addresses and " + strings.Join(out, ", ")
}

// hostAllowed reports whether host, as the URL names it, is on the list.
func (p Policy) hostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return p.Any || slices.Contains(p.Hosts, host)
}

// Allows reports whether the policy lets a call reach address a.
func (p Policy) Allows(a netip.Addr) bool {
	if p.Any || Public(a) {
		return true
	}
	a = a.Unmap()
	for _, n := range p.Nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// CheckHost refuses early a URL's host that names an address the policy
// does not allow, or localhost: what would fail when dialled anyway. Other
// names are checked when dialled.
func (p Policy) CheckHost(host string) error {
	if p.hostAllowed(host) {
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if a, err := netip.ParseAddr(h); err == nil && !p.Allows(a) {
		return ErrPrivate
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return ErrPrivate
	}
	return nil
}

// DialContext returns d's DialContext, refusing, after DNS, every address
// the policy does not allow, unless the host dialled is on its list of
// names.
func (p Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	checked := *d
	checked.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !p.Allows(ap.Addr()) {
			return ErrPrivate
		}
		return nil
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(address); err == nil && p.hostAllowed(host) {
			return d.DialContext(ctx, network, address)
		}
		return checked.DialContext(ctx, network, address)
	}
}

// Timeouts bound a Transport's steps.
type Timeouts struct {
	Dial, TLSHandshake, ResponseHeader time.Duration
}

// Transport is an HTTP transport that dials through the policy and never
// through a proxy.
func (p Policy) Transport(t Timeouts) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext(&net.Dialer{Timeout: t.Dial, KeepAlive: 30 * time.Second}),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   t.TLSHandshake,
		ResponseHeaderTimeout: t.ResponseHeader,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
	}
}
