package connect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"

	"github.com/burnrate/burnrate/connect/egress"
)

// unreachable words a failure to reach a provider at all, for the
// Connections page. Go's own text repeats the whole URL and names the
// resolver this server asked ("lookup x on 10.0.0.53:53"), which is
// neither plain nor the user's business. hint says what the user may have
// mistyped when the name does not resolve; it may be empty. ok is false
// when err is not a network failure.
func unreachable(err error, hint string) (msg string, ok bool) {
	host := ""
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			host = u.Hostname()
		}
	}
	if errors.Is(err, egress.ErrPrivate) {
		if host == "" {
			host = "the endpoint"
		}
		return "could not reach " + host + ": it is a loopback, private or link-local address, which connections may not reach " +
			"(an operator may allow private endpoints with CONNECTIONS_ALLOW_PRIVATE)", true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if host == "" {
			host = dns.Name
		}
		switch {
		case dns.IsNotFound:
			msg = "could not reach " + host + ": the name does not resolve"
			if hint != "" {
				msg += " (" + hint + ")"
			}
		case dns.IsTimeout:
			msg = "could not reach " + host + ": looking up the name timed out; will try again later"
		default:
			msg = "could not reach " + host + ": the name could not be looked up; will try again later"
		}
		return msg, true
	}
	var oe *net.OpError
	if host == "" && errors.As(err, &oe) && oe.Addr != nil {
		host = oe.Addr.String()
	}
	if host == "" {
		host = "the provider"
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused by " + host, true
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("%s did not answer within %d s", host, int(CallTimeout.Seconds())), true
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection to " + host + " was cut off", true
	case errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH):
		return "could not reach " + host + ": no route to it from this server", true
	case oe != nil || ue != nil:
		return "could not reach " + host, true
	}
	return "", false
}
