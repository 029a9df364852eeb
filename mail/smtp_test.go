package mail_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/mail/mailtest"
)

// pngChart is a 1×1 PNG.
var pngChart = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func crlf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// TestSMTPSendsEveryPart sends a digest-shaped message to a real SMTP
// server and reads it back: recipients, subject (not ASCII), the text and
// HTML alternatives, the inline chart the HTML refers to by Content-ID, and
// the extra headers.
func TestSMTPSendsEveryPart(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, mailtest.Options{})
	s, err := mail.NewSMTP(srv.URL(), "Burnrate <burnrate@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	m := mail.Message{
		To:      []string{"ann@example.com", "Bob <bob@example.com>"},
		Subject: "Budget “GPUs” at 112 % — überschritten",
		Text:    "Yesterday: $1,234.56 on GPUs.\nOver budget by 12 %.\n",
		HTML:    `<p>Yesterday: <b>$1,234.56</b> on GPUs.</p><img src="cid:chart" alt="chart">`,
		Inline:  []mail.Part{{ContentID: "chart", Filename: "chart.png", ContentType: "image/png", Data: pngChart}},
		Headers: map[string]string{
			"List-Unsubscribe":      "<https://burnrate.example.com/unsubscribe/abc>",
			"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
			"Message-ID":            "<outbox-7@burnrate.example.com>",
		},
	}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 1)[0]
	if got.EnvelopeFrom != "burnrate@example.com" || strings.Join(got.EnvelopeTo, ",") != "ann@example.com,bob@example.com" {
		t.Errorf("envelope from %q to %v", got.EnvelopeFrom, got.EnvelopeTo)
	}
	if got.Subject != m.Subject {
		t.Errorf("subject = %q, want %q", got.Subject, m.Subject)
	}
	if from := got.Header.Get("From"); !strings.Contains(from, "burnrate@example.com") || !strings.Contains(from, "Burnrate") {
		t.Errorf("From = %q", from)
	}
	if to := got.Header.Get("To"); !strings.Contains(to, "ann@example.com") || !strings.Contains(to, `"Bob" <bob@example.com>`) {
		t.Errorf("To = %q", to)
	}
	if crlf(got.Text) != m.Text {
		t.Errorf("text = %q, want %q", got.Text, m.Text)
	}
	if crlf(got.HTML) != m.HTML {
		t.Errorf("html = %q, want %q", got.HTML, m.HTML)
	}
	if len(got.Inline) != 1 {
		t.Fatalf("inline parts = %+v, want 1", got.Inline)
	}
	if p := got.Inline[0]; p.ContentID != "chart" || p.ContentType != "image/png" || p.Filename != "chart.png" || !bytes.Equal(p.Data, pngChart) {
		t.Errorf("inline part = %s %s %s, %d bytes (want chart, image/png, chart.png, %d bytes)", p.ContentID, p.ContentType, p.Filename, len(p.Data), len(pngChart))
	}
	for k, v := range m.Headers {
		if got := got.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if got.Header.Get("Date") == "" {
		t.Error("no Date header")
	}

	// A subject cannot carry headers of its own.
	if err := s.Send(context.Background(), mail.Message{To: []string{"ann@example.com"}, Subject: "Acme\r\nBcc: eve@example.com", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	sneaky := srv.Wait(t, 2)[1]
	if sneaky.Header.Get("Bcc") != "" || len(sneaky.EnvelopeTo) != 1 || strings.ContainsAny(sneaky.Subject, "\r\n") {
		t.Fatalf("a subject with a line break: Bcc %q, to %v, subject %q", sneaky.Header.Get("Bcc"), sneaky.EnvelopeTo, sneaky.Subject)
	}

	// A text-only message is a single part.
	if err := s.Send(context.Background(), mail.Message{To: []string{"ann@example.com"}, Subject: "Plain", Text: "just text\n"}); err != nil {
		t.Fatal(err)
	}
	plain := srv.Wait(t, 3)[2]
	if crlf(plain.Text) != "just text\n" || plain.HTML != "" || len(plain.Inline) != 0 {
		t.Errorf("text-only message: text %q, html %q, %d inline", plain.Text, plain.HTML, len(plain.Inline))
	}
}

// TestSMTPTLSAndAuth: smtp:// upgrades with STARTTLS when the server offers
// it and logs in there; smtps:// is TLS from the start.
func TestSMTPTLSAndAuth(t *testing.T) {
	t.Parallel()
	for _, implicit := range []bool{false, true} {
		srv := mailtest.Start(t, mailtest.Options{TLS: true, Implicit: implicit, User: "burnrate", Password: "p@ss word"})
		s, err := mail.NewSMTP(srv.URL(), mail.DefaultFrom)
		if err != nil {
			t.Fatal(err)
		}
		mail.TrustRoots(s, srv.RootCAs())
		if err := s.Send(context.Background(), mail.Message{To: []string{"ann@example.com"}, Subject: "Secure", Text: "hi"}); err != nil {
			t.Fatalf("%s: %v", srv.URL(), err)
		}
		if got := srv.Wait(t, 1)[0]; !got.TLS {
			t.Errorf("%s: the message came over plain text", srv.URL())
		}
	}
	// The wrong password is a failure the next try will repeat.
	srv := mailtest.Start(t, mailtest.Options{TLS: true, User: "burnrate", Password: "right"})
	bad := strings.Replace(srv.URL(), ":right@", ":wrong@", 1)
	s, err := mail.NewSMTP(bad, mail.DefaultFrom)
	if err != nil {
		t.Fatal(err)
	}
	mail.TrustRoots(s, srv.RootCAs())
	if err := s.Send(context.Background(), mail.Message{To: []string{"ann@example.com"}, Subject: "x", Text: "x"}); err == nil {
		t.Fatal("sent with the wrong password")
	}
}

// TestSMTPRefusals: a 4xx reply is worth retrying, a 5xx is not.
func TestSMTPRefusals(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, mailtest.Options{})
	s, err := mail.NewSMTP(srv.URL(), mail.DefaultFrom)
	if err != nil {
		t.Fatal(err)
	}
	m := mail.Message{To: []string{"ann@example.com"}, Subject: "x", Text: "x"}
	srv.Refuse(1, 451)
	if err := s.Send(context.Background(), m); err == nil || mail.Permanent(err) {
		t.Fatalf("451: err = %v, permanent = %v; want a temporary error", err, mail.Permanent(err))
	}
	srv.Refuse(1, 550)
	if err := s.Send(context.Background(), m); err == nil || !mail.Permanent(err) {
		t.Fatalf("550: err = %v, permanent = %v; want a permanent error", err, mail.Permanent(err))
	}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages accepted, want 1", n)
	}
	if err := s.Send(context.Background(), mail.Message{Subject: "x", Text: "x"}); !mail.Permanent(err) {
		t.Fatalf("no recipients: %v, want a permanent error", err)
	}
}

func TestNewSMTP(t *testing.T) {
	t.Parallel()
	for _, good := range []string{"smtp://mail:1025", "smtp://user:p%40ss@smtp.example.com:587", "smtps://u:p@smtp.example.com", "smtp://localhost"} {
		if _, err := mail.NewSMTP(good, mail.DefaultFrom); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	for _, bad := range []string{"http://mail:25", "smtp://", "smtp://host:99999", "smtp://host:25/path", "mail:25", "smtp://host?tls=no"} {
		if _, err := mail.NewSMTP(bad, mail.DefaultFrom); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := mail.NewSMTP("smtp://mail:1025", "not an address"); err == nil {
		t.Error("a From that is not an address was accepted")
	}
}
