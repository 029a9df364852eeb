// Package mailtest runs a real SMTP server on a loopback port for tests: it
// keeps the messages it is sent, parsed into their parts, and can be told to
// refuse some first, as a busy or broken server would.
package mailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options shape the server.
type Options struct {
	// TLS offers STARTTLS with a certificate for 127.0.0.1 made for the
	// test (trust it with RootCAs); with Implicit, TLS starts with the
	// connection (smtps://) instead.
	TLS      bool
	Implicit bool
	// User and Password, when set, are required (AUTH PLAIN) before any
	// mail is accepted.
	User, Password string
}

// Server is a running SMTP server. Create it with Start.
type Server struct {
	opts    Options
	addr    string
	roots   *x509.CertPool
	mu      sync.Mutex
	msgs    []Message
	refuse  []*smtp.SMTPError
	tries   int
	arrived chan struct{}
}

// Start starts a server on 127.0.0.1, stopped when t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, arrived: make(chan struct{}, 1)}
	srv := smtp.NewServer(s)
	srv.Domain = "mailtest.localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.ErrorLog = discard{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	s.addr = ln.Addr().String()
	if opts.TLS {
		cfg, roots, err := selfSigned()
		if err != nil {
			t.Fatalf("mailtest: %v", err)
		}
		s.roots = roots
		if opts.Implicit {
			ln = tls.NewListener(ln, cfg)
		} else {
			srv.TLSConfig = cfg
		}
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

type discard struct{}

func (discard) Printf(string, ...any) {}
func (discard) Println(...any)        {}

// URL is the server's SMTP_URL.
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.addr}
	if s.opts.Implicit {
		u.Scheme = "smtps"
	}
	if s.opts.User != "" {
		u.User = url.UserPassword(s.opts.User, s.opts.Password)
	}
	return u.String()
}

// RootCAs trusts the server's certificate (nil without TLS).
func (s *Server) RootCAs() *x509.CertPool { return s.roots }

// Refuse makes the server refuse the next n messages with code (451: try
// again later; 550: never), at MAIL FROM.
func (s *Server) Refuse(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		e := &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 3, 0}, Message: "mailtest refuses this one"}
		s.refuse = append(s.refuse, e)
	}
}

// Tries is how many messages clients began to send (MAIL FROM), accepted
// or refused.
func (s *Server) Tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries
}

// Messages are the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait waits until n messages have been accepted, or fails t after 30
// seconds, and returns them.
func (s *Server) Wait(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if ms := s.Messages(); len(ms) >= n {
			return ms
		}
		select {
		case <-s.arrived:
		case <-deadline:
			t.Fatalf("mailtest: %d messages after 30s, want %d", len(s.Messages()), n)
		}
	}
}

// NewSession implements smtp.Backend.
func (s *Server) NewSession(c *smtp.Conn) (smtp.Session, error) {
	_, isTLS := c.TLSConnectionState()
	return &session{srv: s, tls: isTLS, authed: s.opts.User == ""}, nil
}

type session struct {
	srv    *Server
	tls    bool
	authed bool
	from   string
	to     []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.srv.opts.User == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != ss.srv.opts.User || password != ss.srv.opts.Password {
			return errors.New("mailtest: wrong user or password")
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	if len(s.refuse) > 0 {
		e := s.refuse[0]
		s.refuse = s.refuse[1:]
		return e
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := Parse(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "mailtest cannot parse this: " + err.Error()}
	}
	m.EnvelopeFrom, m.EnvelopeTo, m.TLS = ss.from, ss.to, ss.tls
	s := ss.srv
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// Message is a message as received, parsed.
type Message struct {
	EnvelopeFrom string
	EnvelopeTo   []string
	TLS          bool // it came over a TLS connection
	Header       netmail.Header
	Subject      string // decoded
	Text, HTML   string
	Inline       []Part
	Raw          []byte
}

// Part is an inline part: one with a Content-ID.
type Part struct {
	ContentID   string // without the angle brackets
	ContentType string
	Filename    string
	Data        []byte
}

// Parse reads a MIME message with net/mail and mime/multipart: its headers,
// its text and HTML bodies, and its inline parts, wherever they sit in the
// multipart tree.
func Parse(raw []byte) (Message, error) {
	nm, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Message{}, err
	}
	m := Message{Header: nm.Header, Raw: raw}
	if m.Subject, err = new(mime.WordDecoder).DecodeHeader(nm.Header.Get("Subject")); err != nil {
		return Message{}, err
	}
	err = m.walk(textproto.MIMEHeader(nm.Header), nm.Body)
	return m, err
}

func (m *Message) walk(h textproto.MIMEHeader, body io.Reader) error {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return err
	}
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := m.walk(p.Header, p); err != nil {
				return err
			}
		}
	}
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &lineJoiner{r: body})
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if id := h.Get("Content-Id"); id != "" {
		_, dp, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
		m.Inline = append(m.Inline, Part{ContentID: strings.Trim(id, "<>"), ContentType: media, Filename: dp["filename"], Data: data})
		return nil
	}
	switch media {
	case "text/plain":
		m.Text = string(data)
	case "text/html":
		m.HTML = string(data)
	}
	return nil
}

// lineJoiner drops the line breaks of a base64 body.
type lineJoiner struct{ r io.Reader }

func (l *lineJoiner) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	j := 0
	for _, b := range p[:n] {
		if b != '\r' && b != '\n' {
			p[j] = b
			j++
		}
	}
	return j, err
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned() (*tls.Config, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, roots, nil
}
