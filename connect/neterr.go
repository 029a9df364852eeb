package connect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
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

// What a connection's failure shows is the user's business: what failed,
// in their terms. Errors from the SDKs and net/http repeat the URL they
// asked, query and all (an Azure SAS token lives there, and S3 presigns
// there), and the resolver this server asked ("lookup x on 10.0.0.53:53").
// Every error a sync records or a test shows passes through shown, which
// keeps a URL's scheme, host and path, and drops the rest.

var (
	urlInText  = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>]+`)
	resolverAt = regexp.MustCompile(`\s+on\s+\[?[0-9a-fA-F:.]+\]?:\d+`)
	secretArg  = regexp.MustCompile(`(?i)\b(sig|x-amz-signature|x-amz-credential|x-amz-security-token|signature|access_token|code)=[^&\s"']*`)
)

// scrub removes from s the queries and credentials of the URLs it quotes,
// the resolver's address, and any signature-like argument left over.
func scrub(s string) string {
	s = urlInText.ReplaceAllStringFunc(s, func(raw string) string {
		trail := ""
		if i := strings.LastIndexAny(raw, `),.;:`); i == len(raw)-1 {
			raw, trail = raw[:i], raw[i:]
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return "the endpoint" + trail
		}
		hidden := u.RawQuery != "" || u.User != nil
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		if hidden {
			return u.String() + "?…" + trail
		}
		return u.String() + trail
	})
	s = resolverAt.ReplaceAllString(s, "")
	return secretArg.ReplaceAllString(s, "${1}=…")
}

// shownError is an error as a connection shows it: scrubbed, with the
// original kept for errors.Is and As (Transient).
type shownError struct{ err error }

func (e *shownError) Error() string { return scrub(e.err.Error()) }
func (e *shownError) Unwrap() error { return e.err }

// shown wraps err for the Connections page, the API and the CLI.
func shown(err error) error {
	if err == nil {
		return nil
	}
	return &shownError{err}
}
