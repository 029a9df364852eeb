package account_test

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/account"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/mail/mailtest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

const base = "https://burnrate.example.com"

// running is the App on a test database, its mail going to a real SMTP
// server on loopback and its jobs worked until the test ends.
type running struct {
	st   *store.Store
	app  *app.App
	smtp *mailtest.Server
}

func start(t *testing.T) running {
	t.Helper()
	st := storetest.New(t)
	srv := mailtest.Start(t, mailtest.Options{})
	a, err := app.New(st, app.Config{BaseURL: base, SMTPURL: srv.URL(), MailFrom: "Burnrate <burnrate@example.com>"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Jobs.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
	return running{st: st, app: a, smtp: srv}
}

// linkIn returns the one link under base+path in both the text and the
// HTML of m, failing unless both carry it.
func linkIn(t *testing.T, m mailtest.Message, path string) string {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(base+path) + `[A-Za-z0-9_-]+`)
	text, html := re.FindString(m.Text), re.FindString(m.HTML)
	if text == "" || text != html {
		t.Fatalf("link %s…: text has %q, HTML %q\n%s", path, text, html, m.Text)
	}
	return text
}

// An invite is mailed to the invitee, from the org, with the accept link
// in text and HTML, the inviter's name, the role and how long it lasts;
// the HTML escapes what people typed.
func TestInviteMail(t *testing.T) {
	t.Parallel()
	r := start(t)
	org, owner := storetest.Org(t, r.st, storetest.OrgOpts{Name: "Acme <ML>"})
	link := base + "/join/tok_" + strings.Repeat("a", 20)
	err := r.st.InTx(context.Background(), func(tx *store.Store) error {
		return r.app.Mailer.QueueInvite(context.Background(), tx, account.Invite{
			OrgID: org.ID, OrgName: org.Name, InviterName: "Ann <b>Admin</b>", InviterEmail: owner.Email,
			To: "new@example.com", Role: access.Member, Link: link,
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	m := r.smtp.Wait(t, 1)[0]
	if strings.Join(m.EnvelopeTo, ",") != "new@example.com" || m.Subject != "Ann <b>Admin</b> invited you to Acme <ML> on Burnrate" {
		t.Fatalf("to %v, subject %q", m.EnvelopeTo, m.Subject)
	}
	if got := linkIn(t, m, "/join/"); got != link {
		t.Errorf("link %q, want %q", got, link)
	}
	if !strings.Contains(m.Text, "member") || !strings.Contains(m.Text, "7 days") {
		t.Errorf("text says no role or lifetime:\n%s", m.Text)
	}
	if strings.Contains(m.HTML, "<b>Admin</b>") || !strings.Contains(m.HTML, "&lt;b&gt;Admin&lt;/b&gt;") {
		t.Errorf("the inviter's name is not escaped in the HTML:\n%s", m.HTML)
	}
	mails, err := r.st.OutboxMails(context.Background(), org.ID, 10)
	if err != nil || len(mails) != 1 || mails[0].Kind != account.KindInvite {
		t.Errorf("the org's outbox: %+v, %v", mails, err)
	}
}

// A sign-up by mail gets the link that finishes it, which finishes that
// sign-up; an address with an account gets the notice instead, with the
// way back in (log in, forgotten password) and no link that signs up.
func TestSignupMails(t *testing.T) {
	t.Parallel()
	r := start(t)
	ctx := context.Background()
	err := r.st.InTx(ctx, func(tx *store.Store) error {
		token, err := tx.CreateSignup(ctx, store.NewSignup{Email: "ben@example.com", Name: "Ben", OrgName: "Ben's org", PasswordHash: "x"})
		if err != nil {
			return err
		}
		return r.app.Mailer.QueueSignupConfirm(ctx, tx, "ben@example.com", base+"/signup/confirm/"+token)
	})
	if err != nil {
		t.Fatal(err)
	}
	m := r.smtp.Wait(t, 1)[0]
	if m.EnvelopeTo[0] != "ben@example.com" || m.Subject != "Finish signing up to Burnrate" {
		t.Fatalf("to %v, subject %q", m.EnvelopeTo, m.Subject)
	}
	link := linkIn(t, m, "/signup/confirm/")
	if s, err := r.st.SignupByToken(ctx, strings.TrimPrefix(link, base+"/signup/confirm/")); err != nil || s.Email != "ben@example.com" {
		t.Fatalf("the mailed link finds sign-up %+v, %v", s, err)
	}

	owner := storetest.User(t, r.st, storetest.UserOpts{Email: "ann@example.com"})
	if err := r.app.Mailer.QueueSignupNotice(ctx, r.st, owner.Email); err != nil {
		t.Fatal(err)
	}
	n := r.smtp.Wait(t, 2)[1]
	if n.EnvelopeTo[0] != owner.Email || !strings.Contains(n.Subject, "tried to sign up") {
		t.Fatalf("notice to %v, subject %q", n.EnvelopeTo, n.Subject)
	}
	for _, body := range []string{n.Text, n.HTML} {
		if strings.Contains(body, "/signup/confirm/") || !strings.Contains(body, base+"/login") || !strings.Contains(body, base+"/password/forgot") {
			t.Errorf("notice:\n%s", body)
		}
	}
}

// A password reset asked for an address with an account mails a link that
// sets a new password once; asked for an address without one, it mails
// nothing, though the job ran.
func TestPasswordResetMail(t *testing.T) {
	t.Parallel()
	r := start(t)
	ctx := context.Background()
	u := storetest.User(t, r.st, storetest.UserOpts{Email: "cat@example.com"})
	if err := account.RequestPasswordReset(ctx, r.app.Queue, r.st, "  nobody@example.com "); err != nil {
		t.Fatal(err)
	}
	storetest.WaitJobsDone(t, r.st, 30*time.Second, account.ResetRequestArgs{}.Kind(), mail.SendArgs{}.Kind())
	if n := len(r.smtp.Messages()); n != 0 {
		t.Fatalf("%d mails for an address without an account", n)
	}
	if err := account.RequestPasswordReset(ctx, r.app.Queue, r.st, " CAT@example.com"); err != nil {
		t.Fatal(err)
	}
	m := r.smtp.Wait(t, 1)[0]
	if m.EnvelopeTo[0] != u.Email || m.Subject != "Reset your Burnrate password" || !strings.Contains(m.Text, "60 minutes") {
		t.Fatalf("to %v, subject %q:\n%s", m.EnvelopeTo, m.Subject, m.Text)
	}
	token := strings.TrimPrefix(linkIn(t, m, "/password/reset/"), base+"/password/reset/")
	if got, err := r.st.PasswordResetUser(ctx, token); err != nil || got.ID != u.ID {
		t.Fatalf("the mailed link is for %+v, %v", got, err)
	}
	if _, err := r.st.ResetPassword(ctx, token, "new hash"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.ResetPassword(ctx, token, "again"); err == nil {
		t.Error("the link worked twice")
	}
}
