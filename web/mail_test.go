package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/mail/mailtest"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// mailBundle is a web server whose mail really goes out, as under serve:
// queued in the outbox, delivered by jobs to an SMTP server on loopback.
type mailBundle struct {
	*bundle
	smtp *mailtest.Server
}

// setupMail starts the server, its jobs and the SMTP server; with smtpOn
// false, mail is not configured and stays in the outbox.
func setupMail(t *testing.T, smtpOn bool) *mailBundle {
	t.Helper()
	st := storetest.New(t)
	srv := mailtest.Start(t, mailtest.Options{})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := app.Config{MailFrom: "Burnrate <burnrate@burnrate.test>"}
	if smtpOn {
		cfg.SMTPURL = srv.URL()
	}
	a := testApp(st, cfg)
	runJobs(t, a)
	ws := web.NewServer(log, a, web.Config{Now: testClock})
	return &mailBundle{bundle: &bundle{st: st, srv: ws}, smtp: srv}
}

// waitOutboxStatus reloads the outbox page until its first mail's status
// starts with want (the status is written just after the mail server
// answers), and returns the page.
func waitOutboxStatus(t *testing.T, c *client, want string) *httptest.ResponseRecorder {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec := c.get("/settings/mail")
		wantStatus(t, rec, http.StatusOK)
		status := strings.TrimSpace(doc(t, rec).Find(`[data-testid="outbox-status"]`).First().Text())
		if strings.HasPrefix(status, want) {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox status %q after 30s, want %s", status, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var linkRe = regexp.MustCompile(`http://burnrate\.test(/[^\s"<>]+)`)

// pathIn is the path of the first link to this server in text.
func pathIn(t *testing.T, text string) string {
	t.Helper()
	m := linkRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no link in %q", text)
	}
	return m[1]
}

// TestInviteEmail: an admin's invite is mailed to the invitee, text and
// HTML, with the link the page shows, and the link works.
func TestInviteEmail(t *testing.T) {
	t.Parallel()
	b := setupMail(t, true)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Acme ML"})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/members")
	rec := c.post("/invites", url.Values{"email": {"new@example.com"}, "role": {"member"}})
	wantStatus(t, rec, http.StatusCreated)
	page := doc(t, rec)
	link := strings.TrimSpace(page.Find(".secret").Text())
	if page.Find(`[data-testid="invite-mailed"]`).Length() != 1 || link == "" {
		t.Fatalf("the page does not say the link was mailed:\n%s", rec.Body)
	}
	got := b.smtp.Wait(t, 1)[0]
	if strings.Join(got.EnvelopeTo, ",") != "new@example.com" || !strings.Contains(got.Subject, "Acme ML") {
		t.Fatalf("invite mail to %v, subject %q", got.EnvelopeTo, got.Subject)
	}
	if !strings.Contains(got.Text, link) || !strings.Contains(got.HTML, `href="`+link+`"`) {
		t.Fatalf("the mail lacks the link %s:\ntext: %s\nhtml: %s", link, got.Text, got.HTML)
	}
	if p := pathIn(t, got.Text); p != strings.TrimPrefix(link, "http://burnrate.test") {
		t.Fatalf("mailed link %s, page link %s", p, link)
	}
	invitee := b.client(t)
	wantStatus(t, invitee.get(pathIn(t, got.Text)), http.StatusOK)

	// The org's outbox lists it, sent.
	rec = waitOutboxStatus(t, c, "Sent")
	rows := doc(t, rec).Find(`[data-testid="outbox-row"]`)
	if rows.Length() != 1 || !strings.Contains(rows.Text(), "new@example.com") {
		t.Fatalf("outbox page rows: %q", rows.Text())
	}
	if doc(t, rec).Find(`[data-testid="mail-off"]`).Length() != 0 {
		t.Fatal("the outbox says mail is off when it is on")
	}
	// Members do not see the outbox.
	member := storetest.Member(t, b.st, org, access.Member)
	m := b.client(t)
	m.login(member.Email)
	wantStatus(t, m.get("/settings/mail"), http.StatusForbidden)
}

// TestMailNotConfigured: without SMTP_URL an invite still gives its link,
// the page says the mail is kept, and the outbox keeps it as not sent
// under a banner saying why.
func TestMailNotConfigured(t *testing.T) {
	t.Parallel()
	b := setupMail(t, false)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/members")
	rec := c.post("/invites", url.Values{"email": {"kept@example.com"}, "role": {"viewer"}})
	wantStatus(t, rec, http.StatusCreated)
	if page := doc(t, rec); page.Find(`[data-testid="invite-mail-off"]`).Length() != 1 || page.Find(".secret").Text() == "" {
		t.Fatalf("invite page without mail:\n%s", rec.Body)
	}
	page := doc(t, waitOutboxStatus(t, c, "Not sent"))
	if banner := page.Find(`[data-testid="mail-off"]`).Text(); !strings.Contains(banner, "Mail is not configured (SMTP_URL): messages are kept here") {
		t.Fatalf("banner = %q", banner)
	}
	if !strings.Contains(page.Find(`[data-testid="outbox-row"]`).Text(), mail.NotConfigured) {
		t.Fatalf("row does not say why: %q", page.Find(`[data-testid="outbox-row"]`).Text())
	}
	if n := len(b.smtp.Messages()); n != 0 {
		t.Fatalf("%d messages sent with mail off", n)
	}
	// The forgot-password page warns that no link can arrive.
	if doc(t, b.client(t).get("/password/forgot")).Find(`[data-testid="mail-off"]`).Length() != 1 {
		t.Fatal("the forgot-password page does not say mail is off")
	}
}

// TestPasswordResetByEmail walks a reset from the log-in page to the new
// password: the link arrives by mail, sets the password once, logs every
// other browser out, and is dead afterwards; an expired link is refused.
func TestPasswordResetByEmail(t *testing.T) {
	t.Parallel()
	b := setupMail(t, true)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	elsewhere := b.client(t)
	elsewhere.login(owner.Email)
	wantStatus(t, elsewhere.get("/dashboard"), http.StatusOK)

	c := b.client(t)
	login := doc(t, c.get("/login"))
	href, _ := login.Find(`[data-testid="forgot-password"]`).Attr("href")
	wantStatus(t, c.get(href), http.StatusOK)
	rec := c.post("/password/forgot", url.Values{"email": {strings.ToUpper(owner.Email)}})
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid="reset-requested"]`).Length() != 1 {
		t.Fatalf("no confirmation:\n%s", rec.Body)
	}
	msg := b.smtp.Wait(t, 1)[0]
	if strings.Join(msg.EnvelopeTo, ",") != owner.Email || msg.Subject != "Reset your Burnrate password" {
		t.Fatalf("reset mail to %v, subject %q", msg.EnvelopeTo, msg.Subject)
	}
	resetPath := pathIn(t, msg.Text)
	if !strings.HasPrefix(resetPath, "/password/reset/") || !strings.Contains(msg.HTML, resetPath) {
		t.Fatalf("reset link %q; html %s", resetPath, msg.HTML)
	}

	rec = c.get(resetPath)
	wantStatus(t, rec, http.StatusOK)
	if got := doc(t, rec).Find(`[data-testid="reset-email"]`).Text(); got != owner.Email {
		t.Fatalf("the reset page is for %q, want %q", got, owner.Email)
	}
	const newPassword = "a brand new passphrase"
	wantStatus(t, c.post(resetPath, url.Values{"new_password": {newPassword}, "confirm_password": {"something else"}}), http.StatusUnprocessableEntity)
	wantStatus(t, c.post(resetPath, url.Values{"new_password": {"short"}, "confirm_password": {"short"}}), http.StatusUnprocessableEntity)
	rec = c.post(resetPath, url.Values{"new_password": {newPassword}, "confirm_password": {newPassword}})
	wantStatus(t, rec, http.StatusSeeOther)
	if loc := rec.Header().Get("Location"); loc != "/dashboard" {
		t.Fatalf("after the reset: redirect to %q", loc)
	}
	rec = c.get("/dashboard")
	wantStatus(t, rec, http.StatusOK)
	if flash := doc(t, rec).Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "Password changed") {
		t.Fatalf("flash = %q", flash)
	}
	// The browser logged in before the reset is logged out.
	if rec := elsewhere.get("/dashboard"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
		t.Fatalf("the old session still works: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	fresh := b.client(t)
	fresh.get("/login")
	wantStatus(t, fresh.post("/login", url.Values{"email": {owner.Email}, "password": {storetest.Password}}), http.StatusUnauthorized)
	wantStatus(t, fresh.post("/login", url.Values{"email": {owner.Email}, "password": {newPassword}}), http.StatusSeeOther)

	// The link is used up.
	again := b.client(t)
	wantStatus(t, again.get(resetPath), http.StatusNotFound)
	again.get("/login")
	wantStatus(t, again.post(resetPath, url.Values{"new_password": {"yet another passphrase"}, "confirm_password": {"yet another passphrase"}}), http.StatusNotFound)

	// A link older than an hour is refused.
	again.get("/password/forgot")
	wantStatus(t, again.post("/password/forgot", url.Values{"email": {owner.Email}}), http.StatusOK)
	late := pathIn(t, b.smtp.Wait(t, 2)[1].Text)
	if _, err := storetest.Pool(b.st).Exec(ctx(), `UPDATE password_resets SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, again.get(late), http.StatusNotFound)
	again.get("/login")
	wantStatus(t, again.post(late, url.Values{"new_password": {"yet another passphrase"}, "confirm_password": {"yet another passphrase"}}), http.StatusNotFound)
}

// TestPasswordResetAnswersAlike: a reset request for an address without an
// account gets the very same answer as one for an address with one, and
// mails nobody; both are limited alike.
func TestPasswordResetAnswersAlike(t *testing.T) {
	t.Parallel()
	b := setupMail(t, true)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	const unknown = "nobody-here@example.com"
	answer := func(email string) (int, string) {
		c := b.client(t)
		c.get("/password/forgot")
		rec := c.post("/password/forgot", url.Values{"email": {email}})
		body := strings.ReplaceAll(rec.Body.String(), email, "EMAIL")
		body = strings.ReplaceAll(body, c.csrf, "CSRF")
		return rec.Code, body
	}
	knownCode, knownBody := answer(owner.Email)
	unknownCode, unknownBody := answer(unknown)
	if knownCode != http.StatusOK || unknownCode != knownCode || unknownBody != knownBody {
		t.Fatalf("known: %d, unknown: %d; bodies equal: %v\n--- known\n%s\n--- unknown\n%s", knownCode, unknownCode, knownBody == unknownBody, knownBody, unknownBody)
	}
	b.smtp.Wait(t, 1)
	// Both requests' jobs have run by the time nothing more arrives.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending int
		if err := storetest.Pool(b.st).QueryRow(ctx(), `SELECT count(*) FROM river_job WHERE state NOT IN ('completed')`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still pending after 30s", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ms := b.smtp.Messages(); len(ms) != 1 || ms[0].EnvelopeTo[0] != owner.Email {
		t.Fatalf("mails sent: %d, want 1 to the account", len(ms))
	}
	// Three requests an hour per address, whether it has an account or not.
	for _, email := range []string{owner.Email, unknown} {
		for range 2 {
			if code, _ := answer(email); code != http.StatusOK {
				t.Fatalf("%s: request within the limit answered %d", email, code)
			}
		}
		if code, _ := answer(email); code != http.StatusTooManyRequests {
			t.Fatalf("%s: 4th request in an hour answered %d, want 429", email, code)
		}
	}
}

// TestSignupNoticeEmail: signing up with an address that has an account
// answers as a new sign-up would, and mails the address's owner, once an
// hour at most.
func TestSignupNoticeEmail(t *testing.T) {
	t.Parallel()
	b := setupMail(t, true)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	for range 2 {
		c := b.client(t)
		c.get("/signup")
		rec := c.post("/signup", url.Values{"name": {"Mallory"}, "email": {owner.Email}, "password": {"long enough password"}})
		wantStatus(t, rec, http.StatusSeeOther)
	}
	got := b.smtp.Wait(t, 1)[0]
	if got.EnvelopeTo[0] != owner.Email || !strings.Contains(got.Subject, "tried to sign up") || !strings.Contains(got.Text, "/password/forgot") {
		t.Fatalf("notice to %v, subject %q:\n%s", got.EnvelopeTo, got.Subject, got.Text)
	}
	storetest.WaitJobsDone(t, b.st, 30*time.Second, mail.SendArgs{}.Kind()) // a second notice would be sent by now
	if n := len(b.smtp.Messages()); n != 1 {
		t.Fatalf("%d notices for two tries within the hour, want 1", n)
	}
}
