package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/poll"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// hookReceiver is a loopback server standing in for Slack or a webhook
// receiver.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	status atomic.Int32 // answer; 200 when 0
	ok     atomic.Int32 // 2xx answers given
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies, r.heads = append(r.bodies, body), append(r.heads, req.Header.Clone())
		r.mu.Unlock()
		code := int(r.status.Load())
		if code == 0 {
			code = http.StatusOK
		}
		if code < 300 {
			r.ok.Add(1)
		}
		w.WriteHeader(code)
		io.WriteString(w, http.StatusText(code))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *hookReceiver) last() ([]byte, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[len(r.bodies)-1], r.heads[len(r.heads)-1]
}

// mailbox is a mail.Sender that keeps the messages it is given.
type mailbox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

// setupNotify is a server whose notifier may post to loopback receivers
// (WEBHOOK_ALLOW_PRIVATE=1) and sends email to a mailbox.
func setupNotify(t *testing.T) (*bundle, *mailbox) {
	t.Helper()
	st := storetest.New(t)
	box := &mailbox{}
	n := notify.New(st, box, notify.Config{BaseURL: "http://burnrate.test", AllowPrivate: true})
	a := testApp(st, app.Config{})
	a.Notifier = n // sends at once, to box
	return &bundle{st: st, srv: web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), a, web.Config{Now: testClock})}, box
}

func flashOf(t *testing.T, c *client) string {
	t.Helper()
	rec := c.get("/settings/notifications")
	wantStatus(t, rec, http.StatusOK)
	return doc(t, rec).Find(`[data-testid=flash]`).Text()
}

// signed is the receiver's check from docs/notifications.md.
func signed(secret string, h http.Header, body []byte) bool {
	ts, err := strconv.ParseInt(h.Get("Burnrate-Timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", ts)
	mac.Write(body)
	for _, part := range strings.Split(h.Get("Burnrate-Signature"), ",") {
		sig, ok := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if got, err := hex.DecodeString(sig); ok && err == nil && hmac.Equal(got, mac.Sum(nil)) {
			return true
		}
	}
	return false
}

func TestNotificationChannelsInSettings(t *testing.T) {
	t.Parallel()
	b, box := setupNotify(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Acme ML"})
	slack, hook := newHookReceiver(t), newHookReceiver(t)
	slackURL := slack.URL + "/services/T000/B000/slacksecretXXXX"
	hookURL := hook.URL + "/incoming/acme?token=hooksecretWXYZ"
	c := b.client(t)
	c.login(owner.Email)

	rec := c.get("/settings")
	if doc(t, rec).Find(`[data-testid=notifications-link]`).Length() != 1 {
		t.Error("the settings page does not link to notifications")
	}
	rec = c.get("/settings/notifications")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=deliveries-empty]`).Length() != 1 {
		t.Error("no empty deliveries list")
	}

	wantStatus(t, c.post("/settings/notifications/slack", url.Values{"url": {slackURL}}), http.StatusSeeOther)
	rec = c.post("/settings/notifications/webhook", url.Values{"url": {hookURL}})
	wantStatus(t, rec, http.StatusCreated)
	secret := doc(t, rec).Find(`[data-testid=webhook-secret]`).Text()
	if !strings.HasPrefix(secret, notify.WebhookSecretPrefix) || len(secret) < 40 {
		t.Fatalf("secret shown = %q", secret)
	}

	// From now on the URLs and the secret are never shown in full.
	rec = c.get("/settings/notifications")
	wantStatus(t, rec, http.StatusOK)
	page := rec.Body.String()
	for _, secretPart := range []string{"slacksecret", "hooksecret", "/services/T000", "/incoming/acme", secret} {
		if strings.Contains(page, secretPart) {
			t.Errorf("the page shows %q", secretPart)
		}
	}
	d := doc(t, rec)
	if got := d.Find(`[data-testid=slack-url]`).Text(); got != slack.URL+"/…/XXXX" {
		t.Errorf("slack shown as %q", got)
	}
	if got := d.Find(`[data-testid=webhook-url]`).Text(); got != hook.URL+"/…/WXYZ" {
		t.Errorf("webhook shown as %q", got)
	}
	if d.Find(`[data-testid=new-secret]`).Length() != 0 {
		t.Error("the secret is shown again")
	}

	// Send test, on each channel.
	chs, err := b.st.NotificationChannels(ctx(), org.ID)
	if err != nil || len(chs) != 2 {
		t.Fatalf("channels: %v, %v", chs, err)
	}
	for _, ch := range chs {
		wantStatus(t, c.post("/settings/notifications/channels/"+itoa(ch.ID)+"/test", nil), http.StatusSeeOther)
		if f := flashOf(t, c); !strings.HasPrefix(f, "Test sent to ") || !strings.Contains(f, ch.URLMasked) {
			t.Errorf("flash after the %s test = %q", ch.Kind, f)
		}
	}
	if slack.count() != 1 || hook.count() != 1 {
		t.Fatalf("slack got %d, webhook %d; want 1 each", slack.count(), hook.count())
	}
	body, _ := slack.last()
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil || !strings.Contains(fmt.Sprint(msg["text"]), "Test notification from Burnrate") || msg["blocks"] == nil {
		t.Errorf("slack test message = %s", body)
	}
	body, head := hook.last()
	if !signed(secret, head, body) {
		t.Errorf("the webhook test is not signed with the secret shown: %v", head)
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg["type"] != "test" || msg["link"] != "http://burnrate.test/settings/notifications" {
		t.Errorf("webhook test body = %s", body)
	}
	wantStatus(t, c.post("/settings/notifications/email/test", nil), http.StatusSeeOther)
	if f := flashOf(t, c); f != "Test sent to email ("+owner.Email+")." {
		t.Errorf("flash after the email test = %q", f)
	}
	if len(box.sent) != 1 || len(box.sent[0].To) != 1 || box.sent[0].To[0] != owner.Email || box.sent[0].Subject != "Test notification from Burnrate" {
		t.Fatalf("mail sent = %+v", box.sent)
	}

	rec = c.get("/settings/notifications")
	rows := doc(t, rec).Find(`[data-testid=delivery-row]`)
	if rows.Length() != 3 {
		t.Fatalf("delivery rows = %d, want 3", rows.Length())
	}
	if got := doc(t, rec).Find(`[data-testid=delivery-status]`).Text(); strings.Count(got, "sent") != 3 {
		t.Errorf("statuses = %q", got)
	}

	// Rotating shows a new secret once; the old one signs for a while too.
	rec = c.post("/settings/notifications/secret/rotate", nil)
	wantStatus(t, rec, http.StatusCreated)
	rotated := doc(t, rec).Find(`[data-testid=webhook-secret]`).Text()
	if rotated == secret || !strings.HasPrefix(rotated, notify.WebhookSecretPrefix) {
		t.Fatalf("rotated secret = %q", rotated)
	}
	wantStatus(t, c.post("/settings/notifications/channels/"+itoa(chs[1].ID)+"/test", nil), http.StatusSeeOther)
	body, head = hook.last()
	if !signed(rotated, head, body) || !signed(secret, head, body) {
		t.Errorf("after rotation, signatures %q do not verify with both secrets", head.Get("Burnrate-Signature"))
	}

	// Removing a channel.
	wantStatus(t, c.post("/settings/notifications/channels/"+itoa(chs[0].ID)+"/delete", nil), http.StatusSeeOther)
	if d := doc(t, c.get("/settings/notifications")); d.Find(`[data-testid=slack-url]`).Length() != 0 {
		t.Error("the Slack channel is still shown")
	}
}

func TestFailedTestIsShownAndRetried(t *testing.T) {
	t.Parallel()
	b, _ := setupNotify(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	slack := newHookReceiver(t)
	slack.status.Store(http.StatusInternalServerError)
	c := b.client(t)
	c.login(owner.Email)
	c.get("/settings/notifications")
	wantStatus(t, c.post("/settings/notifications/slack", url.Values{"url": {slack.URL + "/services/T/B/X"}}), http.StatusSeeOther)
	rec := c.get("/settings/notifications")
	test, _ := doc(t, rec).Find(`[data-testid=test-slack]`).Attr("action")
	wantStatus(t, c.post(test, nil), http.StatusSeeOther)

	rec = c.get("/settings/notifications")
	d := doc(t, rec)
	if f := d.Find(`[data-testid=flash]`).Text(); !strings.Contains(f, "failed: HTTP 500: Internal Server Error") {
		t.Errorf("flash = %q", f)
	}
	if got := strings.Join(strings.Fields(d.Find(`[data-testid=delivery-status]`).Text()), " "); got != "retrying" {
		t.Errorf("status = %q, want retrying", got)
	}
	if got := strings.Join(strings.Fields(d.Find(`[data-testid=delivery-error]`).Text()), " "); got != "500 HTTP 500: Internal Server Error" {
		t.Errorf("answer shown = %q", got)
	}
	retry, ok := d.Find(`[data-testid=retry-delivery]`).Attr("action")
	if !ok {
		t.Fatal("no retry button on a failed delivery")
	}

	slack.status.Store(http.StatusOK)
	wantStatus(t, c.post(retry, nil), http.StatusSeeOther)
	if f := flashOf(t, c); !strings.HasPrefix(f, "Retry sent to Slack") {
		t.Errorf("flash after retry = %q", f)
	}
	wantStatus(t, c.post(retry, nil), http.StatusSeeOther)
	if slack.ok.Load() != 1 || slack.count() != 2 {
		t.Fatalf("posts = %d, successful = %d; want 2 and 1", slack.count(), slack.ok.Load())
	}
	d = doc(t, c.get("/settings/notifications"))
	if d.Find(`[data-testid=retry-delivery]`).Length() != 0 {
		t.Error("a sent delivery offers a retry")
	}
}

// TestPrivateWebhookTargetsAreRefused: without WEBHOOK_ALLOW_PRIVATE, a
// webhook or Slack URL to a loopback or private address is refused when it
// is entered (and, for names, when connecting: see package notify).
func TestPrivateWebhookTargetsAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t) // the default notifier: private targets not allowed
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	hook := newHookReceiver(t)
	c := b.client(t)
	c.login(owner.Email)
	c.get("/settings/notifications")
	for _, u := range []string{hook.URL + "/hook", strings.Replace(hook.URL, "http:", "https:", 1) + "/hook",
		"https://localhost/hook", "https://169.254.169.254/latest", "https://[::1]/hook", "https://10.0.0.8/hook"} {
		rec := c.post("/settings/notifications/webhook", url.Values{"url": {u}})
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if doc(t, rec).Find(`[data-testid=form-error]`).Length() != 1 {
			t.Errorf("%s: no error shown", u)
		}
	}
	for _, u := range []string{hook.URL + "/services/T/B/X", "https://hooks.slack.com.evil.test/services/x"} {
		wantStatus(t, c.post("/settings/notifications/slack", url.Values{"url": {u}}), http.StatusUnprocessableEntity)
	}
	wantStatus(t, c.post("/settings/notifications/slack", url.Values{"url": {"https://hooks.slack.com/services/T0/B0/abc"}}), http.StatusSeeOther)
	chs, _ := b.st.NotificationChannels(ctx(), org.ID)
	if len(chs) != 1 || chs[0].Kind != "slack" {
		t.Fatalf("channels saved = %+v, want the Slack one only", chs)
	}
	if hook.count() != 0 {
		t.Fatalf("the loopback receiver got %d requests", hook.count())
	}
}

func TestOnlyAdminsChangeNotifications(t *testing.T) {
	t.Parallel()
	b, _ := setupNotify(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	ch, err := b.st.SetNotificationChannel(ctx(), org.ID, 0, "slack", "https://hooks.slack.com/services/T/B/secretABCD", "https://hooks.slack.com/…/ABCD", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	member := storetest.Member(t, b.st, org, access.Member)
	c := b.client(t)
	c.login(member.Email)
	rec := c.get("/settings/notifications")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if d.Find(`[data-testid=slack-form], [data-testid=test-slack], [data-testid=test-email]`).Length() != 0 {
		t.Error("a member sees the admin's forms")
	}
	if strings.Contains(rec.Body.String(), "secretABCD") {
		t.Error("a member sees the Slack URL")
	}
	for _, path := range []string{"/settings/notifications/slack", "/settings/notifications/webhook", "/settings/notifications/secret/rotate",
		"/settings/notifications/email/test", "/settings/notifications/channels/" + itoa(ch.ID) + "/test",
		"/settings/notifications/channels/" + itoa(ch.ID) + "/delete"} {
		wantStatus(t, c.post(path, url.Values{"url": {"https://hooks.slack.com/services/x"}}), http.StatusForbidden)
	}
}

func TestBudgetHasItsOwnChannels(t *testing.T) {
	t.Parallel()
	b, _ := setupNotify(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	orgSlack, budgetSlack := newHookReceiver(t), newHookReceiver(t)
	c := b.client(t)
	c.login(owner.Email)
	c.get("/settings/notifications")
	wantStatus(t, c.post("/settings/notifications/slack", url.Values{"url": {orgSlack.URL + "/services/org"}}), http.StatusSeeOther)

	c.get("/budgets/new")
	// A webhook of its own needs the org's signing secret, made with the
	// org's webhook.
	rec := c.post("/budgets", url.Values{"name": {"GPUs"}, "amount": {"1000"}, "webhook_url": {"http://127.0.0.1:1/h"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if got := doc(t, rec).Find(`[data-testid=field-error]`).Text(); !strings.Contains(got, "signed with the org's secret") {
		t.Errorf("field error = %q", got)
	}
	rec = c.post("/budgets", url.Values{"name": {"GPUs"}, "amount": {"1000"}, "slack_url": {"not a url"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	rec = c.post("/budgets", url.Values{"name": {"GPUs"}, "amount": {"1000"}, "slack_url": {budgetSlack.URL + "/services/gpus/secretQRST"}})
	wantStatus(t, rec, http.StatusSeeOther)
	loc := rec.Header().Get("Location")
	bs, _ := b.st.Budgets(ctx(), org.ID)
	if len(bs) != 1 {
		t.Fatalf("budgets = %d", len(bs))
	}

	rec = c.get(loc + "/edit")
	wantStatus(t, rec, http.StatusOK)
	if got := doc(t, rec).Find(`[data-testid=budget-slack-url]`).Text(); got != budgetSlack.URL+"/…/QRST" || strings.Contains(rec.Body.String(), "secretQRST") {
		t.Errorf("edit page shows the budget's Slack as %q", got)
	}
	// Saving the form without a URL keeps the channel.
	wantStatus(t, c.post(loc, url.Values{"name": {"GPUs"}, "amount": {"1200"}}), http.StatusSeeOther)

	// The notifications page lists it with a test button; its test goes to
	// the budget's Slack, not the org's.
	d := doc(t, c.get("/settings/notifications"))
	row := d.Find(`[data-testid=budget-channel-row]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "GPUs") || !strings.Contains(row.Text(), "/…/QRST") {
		t.Fatalf("budget channel rows = %q", row.Text())
	}
	test, _ := row.Find(`[data-testid=test-slack]`).Attr("action")
	wantStatus(t, c.post(test, nil), http.StatusSeeOther)
	if budgetSlack.count() != 1 || orgSlack.count() != 0 {
		t.Fatalf("budget Slack got %d, org Slack %d", budgetSlack.count(), orgSlack.count())
	}

	// Back to the org's.
	wantStatus(t, c.post(loc, url.Values{"name": {"GPUs"}, "amount": {"1200"}, "slack_remove": {"1"}}), http.StatusSeeOther)
	if chs, _ := b.st.BudgetChannels(ctx(), org.ID, bs[0].ID); len(chs) != 0 {
		t.Fatalf("budget channels after removal = %+v", chs)
	}
	// Deleting a budget deletes its channels.
	wantStatus(t, c.post(loc, url.Values{"name": {"GPUs"}, "amount": {"1200"}, "slack_url": {budgetSlack.URL + "/services/again"}}), http.StatusSeeOther)
	wantStatus(t, c.post(loc+"/delete", nil), http.StatusSeeOther)
	if chs, _ := b.st.NotificationChannels(ctx(), org.ID); len(chs) != 1 || chs[0].BudgetID != 0 {
		t.Fatalf("channels after deleting the budget = %+v", chs)
	}
}

// On a server without SMTP_URL, a test email goes where all its mail goes:
// to the outbox (Settings → Mail), kept there, not sent.
func TestNotifierWithoutMailKeepsItInTheOutbox(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	a := testApp(st, app.Config{}) // no SMTP_URL
	runJobs(t, a)
	b := &bundle{st: st, srv: web.NewServer(slog.New(slog.DiscardHandler), a, web.Config{Now: testClock})}
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/settings/notifications")
	wantStatus(t, c.post("/settings/notifications/email/test", nil), http.StatusSeeOther)
	if f := flashOf(t, c); !strings.Contains(f, "Test queued for email ("+owner.Email+")") {
		t.Errorf("flash = %q", f)
	}
	var mails []store.OutboxMail
	poll.Until(t, 30*time.Second, "the test email kept in the outbox", func() bool {
		var err error
		if mails, err = b.st.OutboxMails(ctx(), org.ID, 10); err != nil {
			t.Fatal(err)
		}
		return len(mails) == 1 && mails[0].Status == store.MailNotSent
	})
	if mails[0].LastError != mail.NotConfigured || len(mails[0].To) != 1 || mails[0].To[0] != owner.Email {
		t.Errorf("outbox mail %+v", mails[0])
	}
}

// TestWhoGetsWhat: the budget form's recipients are called what they are
// (they get the budget's alerts, not the digest), and Settings →
// Notifications says who gets each kind of notification.
func TestWhoGetsWhat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	form := doc(t, c.get("/budgets/new"))
	label := form.Find(`[data-testid=alert-recipients]`).Parent().Text()
	if !strings.Contains(label, "Alert recipients") || !strings.Contains(label, "not the daily digest") ||
		strings.Contains(form.Text(), "Digest recipients") {
		t.Errorf("the recipients field reads %q", label)
	}
	table := doc(t, c.get("/settings/notifications")).Find(`[data-testid=who-gets-what]`).Text()
	for _, want := range []string{"Budget alert", "the budget's alert recipients", "Daily digest", "not a budget's alert recipients",
		"Connection failing", "owners and admins"} {
		if !strings.Contains(table, want) {
			t.Errorf("who gets what lacks %q:\n%s", want, table)
		}
	}
}
