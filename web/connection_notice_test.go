package web_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/mail/mailtest"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// costsServer is OpenAI's organization Costs API in its documented shape
// (daily buckets, one result each), accepting key while ok is set and
// refusing every key with 401 otherwise.
func costsServer(t *testing.T, key string, ok *atomic.Bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok.Load() || r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: the key was revoked"}}`)
			return
		}
		start, _ := strconv.ParseInt(r.URL.Query().Get("start_time"), 10, 64)
		end, _ := strconv.ParseInt(r.URL.Query().Get("end_time"), 10, 64)
		var data []map[string]any
		for d := start; d < end; d += 86400 {
			data = append(data, map[string]any{"object": "bucket", "start_time": d, "end_time": d + 86400, "results": []any{
				map[string]any{"object": "organization.costs.result", "amount": map[string]any{"value": json.Number("12.5"), "currency": "usd"},
					"line_item": "gpt-4o-2024-08-06, input", "project_id": "proj_prod", "organization_id": "org-1"}}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "page", "data": data, "has_more": false, "next_page": nil})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFailingConnectionIsToldOnceAndRecovers: a connection whose key is
// revoked is told to the org's owners and admins once per failure streak,
// by email (a real SMTP server) and on the org's webhook, with the error
// and the fix; it shows on the dashboard, not only on Connections; a
// second failed run tells nobody again; the run that works again sends
// one more email, and the dashboard no longer shows it.
func TestFailingConnectionIsToldOnceAndRecovers(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	smtp := mailtest.Start(t, mailtest.Options{})
	sender, err := mail.NewSMTP(smtp.URL(), "Burnrate <burnrate@burnrate.test>")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hooks []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		hooks = append(hooks, body)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	notifier := notify.New(st, sender, notify.Config{BaseURL: "http://burnrate.test", AllowPrivate: true})

	var keyOK atomic.Bool
	keyOK.Store(true)
	const key = "sk-admin-NOTICE-test-5k2p"
	openai := costsServer(t, key, &keyOK)
	raw := make([]byte, 32)
	rand.Read(raw)
	sealKey, err := seal.ParseKey("SECRET_KEY", base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	now := testNow
	svc := &connect.Service{Store: st, Key: sealKey, OpenAIURL: openai.URL, Notifier: notifier, Now: func() time.Time { return now },
		Retry: connect.Retry{Attempts: 1, Wait: time.Millisecond, MaxWait: time.Millisecond},
	}
	a := testApp(st, app.Config{SecretKey: sealKey})
	svc.Importer = a.Importer
	a.Connections = svc // the test's clock and retries, and a notifier that sends at once
	srv := web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), a, web.Config{Now: func() time.Time { return now }})
	b := &bundle{st: st, srv: srv}

	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme ML"})
	admin := storetest.Member(t, st, org, access.Admin)
	member := storetest.Member(t, st, org, access.Member)
	if _, err := st.CreateWebhookSecret(ctx(), org.ID, "brwh_"+strings.Repeat("k", 43)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetNotificationChannel(ctx(), org.ID, 0, store.ChannelWebhook, hook.URL, "http://127.0.0.1/…", owner.ID); err != nil {
		t.Fatal(err)
	}
	var conn store.Connection
	err = st.Fenced(ctx(), org.ID, 0, func(fst *store.Store) error {
		conn, err = svc.Create(ctx(), fst, org.ID, owner.ID, connect.Input{Name: "OpenAI prod", Kind: connect.KindOpenAI, APIKey: key,
			StartDate: now.AddDate(0, 0, -10).Format(time.DateOnly)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func() {
		t.Helper()
		_, _ = svc.Sync(context.Background(), org.ID, conn.ID)
	}
	c := b.client(t)
	c.login(member.Email)
	problems := func() string {
		t.Helper()
		return doc(t, c.get("/dashboard")).Find(`[data-testid=connection-problems]`).Text()
	}

	// It works: data, no email, nothing on the dashboard.
	run()
	if n := len(smtp.Messages()); n != 0 {
		t.Fatalf("%d emails after a sync that worked", n)
	}
	if p := problems(); p != "" {
		t.Fatalf("the dashboard shows a problem after a sync that worked: %q", p)
	}

	// The key is revoked: one email to the owner and the admin, with the
	// error and what to do, and the webhook.
	keyOK.Store(false)
	now = now.Add(6 * time.Hour)
	run()
	got := smtp.Wait(t, 1)
	m := got[0]
	to := slices.Clone(m.EnvelopeTo)
	slices.Sort(to)
	want := []string{owner.Email, admin.Email}
	slices.Sort(want)
	if !slices.Equal(to, want) {
		t.Errorf("the failure went to %v, want the owner and the admin %v", to, want)
	}
	if !strings.Contains(m.Subject, "“OpenAI prod” is failing") || !strings.Contains(m.Text, "the key was revoked") ||
		!strings.Contains(m.Text, "paste a new one") || !strings.Contains(m.Text, "What to do:") {
		t.Errorf("failure email %q:\n%s", m.Subject, m.Text)
	}
	p := problems()
	if !strings.Contains(p, "“OpenAI prod” is failing") || !strings.Contains(p, "paste a new one") {
		t.Errorf("the dashboard says %q, want the failing connection and its fix", p)
	}

	// Failing again is the same streak: nobody is told twice.
	now = now.Add(time.Hour)
	run() // the notifier sends at once: an email would be in by now
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d emails after the second failed run, want still 1", n)
	}

	// The key works again: one more email, and the dashboard is clear.
	keyOK.Store(true)
	now = now.Add(time.Hour)
	run()
	got = smtp.Wait(t, 2)
	if r := got[1]; !strings.Contains(r.Subject, "“OpenAI prod” works again") {
		t.Errorf("recovery email %q:\n%s", r.Subject, r.Text)
	}
	if p := problems(); p != "" {
		t.Errorf("the dashboard still shows %q after the connection recovered", p)
	}
	run()
	if n := len(smtp.Messages()); n != 2 {
		t.Errorf("%d emails after another good run, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	var events []string
	for _, h := range hooks {
		if d, ok := h["data"].(map[string]any); ok {
			events = append(events, fmt.Sprint(d["event"]))
		}
	}
	if !slices.Equal(events, []string{"failing", "recovered"}) {
		t.Errorf("webhook events %v (%v), want failing then recovered", events, hooks)
	}
}
