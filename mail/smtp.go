package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// DefaultFrom is the sender when MAIL_FROM is unset. Most mail servers
// refuse it, or mark it spam: set MAIL_FROM to an address of a domain the
// server sends for.
const DefaultFrom = "Burnrate <burnrate@localhost>"

// SMTP delivers mail through an SMTP server. It is safe for concurrent use:
// each Send has a connection of its own.
type SMTP struct {
	host     string
	port     int
	implicit bool // smtps://: TLS from the first byte
	user     string
	password string
	from     *netmail.Address
	timeout  time.Duration
	rootCAs  *x509.CertPool // nil: the system's (tests trust their own)
}

// NewSMTP reads an SMTP_URL and the From address:
//
//   - smtp://user:password@host:587 talks plain SMTP and upgrades to TLS
//     with STARTTLS whenever the server offers it; credentials are sent
//     only over TLS (or to a server on localhost). The port defaults to 587.
//   - smtps://user:password@host:465 uses TLS from the start (port 465 by
//     default).
//   - smtp://host:1025, without credentials, suits a local mail catcher.
//
// User and password are URL-encoded (p%40ss for p@ss).
func NewSMTP(rawURL, from string) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	s := &SMTP{host: u.Hostname(), timeout: 30 * time.Second}
	switch u.Scheme {
	case "smtp":
		s.port = 587
	case "smtps":
		s.port, s.implicit = 465, true
	default:
		return nil, fmt.Errorf("scheme %q: want smtp:// or smtps://", u.Scheme)
	}
	if s.host == "" {
		return nil, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		s.port, err = strconv.Atoi(p)
		if err != nil || s.port < 1 || s.port > 65535 {
			return nil, fmt.Errorf("port %q: want 1 to 65535", p)
		}
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return nil, errors.New("no path or query expected")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
	}
	if s.from, err = ParseFrom(from); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseFrom reads a From address such as "Burnrate <burnrate@example.com>"
// or "burnrate@example.com".
func ParseFrom(from string) (*netmail.Address, error) {
	a, err := netmail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("from address %q: want an address such as \"Burnrate <burnrate@example.com>\"", from)
	}
	return a, nil
}

// Send delivers m. An error from the server that says the message will
// never be accepted (a 5xx reply) satisfies Permanent; anything else is
// worth trying again later.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.build(m)
	if err != nil {
		return err
	}
	opts := []gomail.Option{
		gomail.WithPort(s.port),
		gomail.WithTimeout(s.timeout),
		gomail.WithTLSConfig(&tls.Config{ServerName: s.host, RootCAs: s.rootCAs, MinVersion: tls.VersionTLS12}),
	}
	if s.implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.user != "" {
		opts = append(opts,
			gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.user), gomail.WithPassword(s.password))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp %s:%d: %w", s.host, s.port, err)
	}
	return nil
}

// build turns m into a MIME message: text, with the HTML as an alternative,
// and inline parts beside the HTML (multipart/related).
func (s *SMTP) build(m Message) (*gomail.Msg, error) {
	if len(m.To) == 0 {
		return nil, &PermanentError{Err: errors.New("mail: no recipients")}
	}
	msg := gomail.NewMsg()
	msg.FromMailAddress(s.from)
	if err := msg.To(m.To...); err != nil {
		return nil, &PermanentError{Err: fmt.Errorf("mail: recipients %v: %w", m.To, err)}
	}
	msg.Subject(oneLine(m.Subject))
	msg.SetDate()
	msg.SetUserAgent("Burnrate")
	for k, v := range m.Headers {
		if strings.EqualFold(k, "Message-Id") {
			msg.SetMessageIDWithValue(strings.Trim(oneLine(v), "<>"))
			continue
		}
		if k == "" || strings.ContainsAny(k, ": \t\r\n") {
			return nil, &PermanentError{Err: fmt.Errorf("mail: header name %q", k)}
		}
		msg.SetGenHeader(gomail.Header(k), oneLine(v))
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	for _, p := range m.Inline {
		err := msg.EmbedReader(p.Filename, bytes.NewReader(p.Data),
			gomail.WithFileContentID(p.ContentID), gomail.WithFileContentType(gomail.ContentType(p.ContentType)))
		if err != nil {
			return nil, &PermanentError{Err: fmt.Errorf("mail: inline part %s: %w", p.Filename, err)}
		}
	}
	return msg, nil
}

// oneLine keeps a header value on its line: a subject made from an org's
// name must not be able to add headers (a Bcc) of its own.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// PermanentError is a failure that trying again will not fix: a message
// that cannot be built, or a server's 5xx reply.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent reports whether err says the message will never be delivered
// as it is, so retrying is pointless.
func Permanent(err error) bool {
	var pe *PermanentError
	if errors.As(err, &pe) {
		return true
	}
	var se *gomail.SendError
	return errors.As(err, &se) && se.ErrorCode() >= 500 && se.ErrorCode() < 600
}
