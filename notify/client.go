package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/burnrate/burnrate/connect/egress"
)

// A webhook URL is chosen by an org admin, and the server that posts to it
// sits inside the operator's network. The check that matters is the one
// package egress makes on the address actually dialled, after DNS, for
// every connection (redirects included); the URL checks below only refuse
// early what is bound to fail.

// newClient is the HTTP client for Slack and webhooks: bounded in time,
// dialling through egress (never through a proxy), following redirects
// only within the same host.
func newClient(allowPrivate bool, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: egress.Policy{Any: allowPrivate}.Transport(egress.Timeouts{Dial: 5 * time.Second, TLSHandshake: 5 * time.Second, ResponseHeader: timeout}),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != via[0].URL.Scheme || !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				return fmt.Errorf("redirected to another host (%s), which is not followed", req.URL.Host)
			}
			return nil
		},
	}
}

// maxResponseBytes bounds how much of a receiver's answer is read.
const maxResponseBytes = 64 << 10

// post sends body to target and says how it went. A 2xx answer is success;
// 408, 429 and 5xx answers and network errors may pass; other answers will
// not.
func (n *Notifier) post(ctx context.Context, target string, body []byte, header http.Header) outcome {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return failed(true, "the URL is not valid")
	}
	req.Header = header
	resp, err := n.client.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return transportFailure(err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return outcome{code: code}
	}
	msg := fmt.Sprintf("HTTP %d", code)
	if excerpt := printable(head, 200); excerpt != "" {
		msg += ": " + excerpt
	}
	o := failed(code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests, msg)
	o.code = code
	return o
}

// transportFailure describes a request that got no answer. The client's
// errors name the URL, which may hold a credential (a Slack webhook's path
// is its secret): only the cause is kept.
func transportFailure(err error) outcome {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, egress.ErrPrivate):
		return failed(true, "refused: the URL resolves to a loopback, private or link-local address (set WEBHOOK_ALLOW_PRIVATE=1 to allow)")
	case errors.Is(err, context.DeadlineExceeded) || (ue != nil && ue.Timeout()):
		return failed(false, "no answer within the timeout")
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return failed(false, "the host name does not resolve: "+dnsErr.Name)
	}
	return failed(false, err.Error())
}

// printable is the start of a receiver's answer as one line of text, at
// most n bytes.
func printable(b []byte, n int) string {
	s := strings.ToValidUTF8(string(b), "�")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// CheckSlackURL says what is wrong with raw as a Slack incoming webhook:
// it must be https://hooks.slack.com/… unless private targets are allowed.
func (n *Notifier) CheckSlackURL(raw string) error {
	u, err := parseTarget(raw)
	if err != nil {
		return err
	}
	if n.cfg.AllowPrivate {
		return nil
	}
	if u.Scheme != "https" || !strings.EqualFold(u.Hostname(), "hooks.slack.com") || u.Port() != "" || len(u.Path) < 2 {
		return errors.New("a Slack incoming webhook URL starts with https://hooks.slack.com/ (Slack: Apps → Incoming Webhooks)")
	}
	return nil
}

// CheckWebhookURL says what is wrong with raw as a webhook URL: it must be
// https:// and not name a loopback or private address, unless private
// targets are allowed. Host names are checked when connecting.
func (n *Notifier) CheckWebhookURL(raw string) error {
	u, err := parseTarget(raw)
	if err != nil {
		return err
	}
	if n.cfg.AllowPrivate {
		return nil
	}
	if u.Scheme != "https" {
		return errors.New("use an https:// URL: the body is signed but not encrypted")
	}
	if err := (egress.Policy{}).CheckHost(u.Hostname()); err != nil {
		return errors.New("the URL names a loopback, private or link-local address, which is refused (WEBHOOK_ALLOW_PRIVATE=1 allows it on self-hosted installs)")
	}
	return nil
}

// parseTarget is the checks every channel URL passes.
func parseTarget(raw string) (*url.URL, error) {
	if raw == "" || len(raw) > 2000 || strings.ContainsFunc(raw, unicode.IsSpace) {
		return nil, errors.New("give a URL of at most 2000 characters, without spaces")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("give an absolute http:// or https:// URL")
	}
	if u.User != nil {
		return nil, errors.New("put no user name or password in the URL")
	}
	if u.Fragment != "" {
		return nil, errors.New("a URL with a #fragment cannot be posted to")
	}
	return u, nil
}

// Mask is raw as shown back on pages: the scheme and host, and the last
// four characters of the rest, which is often a credential
// (https://hooks.slack.com/…/XXXX).
func Mask(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "…"
	}
	out := u.Scheme + "://" + u.Host
	rest := strings.TrimPrefix(raw, u.Scheme+"://")
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	if strings.Trim(rest, "/") == "" {
		return out + "/"
	}
	r := []rune(rest)
	if len(r) <= 4 {
		return out + "/…"
	}
	return out + "/…/" + string(r[len(r)-4:])
}
