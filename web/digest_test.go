package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDigestUnsubscribe: the link's GET only asks; the one-click POST of
// RFC 8058 unsubscribes without a log-in or CSRF token; a tampered token
// is refused and changes nothing.
func TestDigestUnsubscribe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	other := storetest.Member(t, b.st, org, access.Admin)
	key, err := digest.UnsubscribeKey(ctx(), b.st)
	if err != nil {
		t.Fatal(err)
	}
	link := digest.UnsubscribeURL("http://burnrate.test", digest.UnsubscribeToken(key, org.ID, owner.ID))
	path := strings.TrimPrefix(link, "http://burnrate.test")

	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	wantStatus(t, rec, http.StatusOK)
	if d := doc(t, rec); d.Find(`[data-testid=unsubscribe] form[method=post]`).Length() != 1 {
		t.Fatalf("no confirm form:\n%s", rec.Body)
	}
	if unsub, _ := b.st.DigestUnsubscribed(ctx(), org.ID, owner.ID); unsub {
		t.Fatal("a GET unsubscribed")
	}

	oneClick := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("List-Unsubscribe=One-Click"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site") // as a mail provider's server is, if it sends one
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		return rec
	}
	rec = oneClick(path)
	wantStatus(t, rec, http.StatusOK)
	if unsub, _ := b.st.DigestUnsubscribed(ctx(), org.ID, owner.ID); !unsub {
		t.Fatal("the one-click POST did not unsubscribe")
	}
	wantStatus(t, oneClick(path), http.StatusOK) // twice is once

	// The owner's token with the other member's id, or a changed MAC.
	tok := digest.UnsubscribeToken(key, org.ID, owner.ID)
	forged := url.QueryEscape(strings.Replace(tok, "."+itoa(owner.ID)+".", "."+itoa(other.ID)+".", 1))
	mac := tok[strings.LastIndexByte(tok, '.')+1:]
	flipped := tok[:len(tok)-len(mac)] + strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, mac[:1]) + mac[1:]
	for _, bad := range []string{"/digest/unsubscribe?token=" + forged, "/digest/unsubscribe?token=" + flipped, "/digest/unsubscribe"} {
		wantStatus(t, oneClick(bad), http.StatusNotFound)
	}
	if unsub, _ := b.st.DigestUnsubscribed(ctx(), org.ID, other.ID); unsub {
		t.Fatal("a forged token unsubscribed another member")
	}
}

// TestDigestSettings: everyone sees the page and its preview; admins save
// the settings, members cannot; the preview is served alone under a policy
// that allows inline styles and nothing else, sandboxed.
func TestDigestSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: `Acme <b>ML</b>`})
	member := storetest.Member(t, b.st, org, access.Member)
	c := b.client(t)
	c.login(owner.Email)

	rec := c.get("/settings/digest?date=2026-03-10")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	frame := d.Find(`iframe[data-testid=digest-frame]`)
	if src, _ := frame.Attr("src"); src != "/settings/digest/preview?date=2026-03-10" {
		t.Errorf("frame src %q", src)
	}
	if sb, ok := frame.Attr("sandbox"); !ok || sb != "" {
		t.Errorf("frame sandbox %q (%v), want an empty sandbox", sb, ok)
	}
	if got := d.Find(`[data-testid=digest-subject]`).Text(); got != "Acme <b>ML</b>: nothing spent on Mar 10" {
		t.Errorf("subject %q", got)
	}

	rec = c.get("/settings/digest/preview?date=2026-03-10")
	wantStatus(t, rec, http.StatusOK)
	if csp := rec.Header().Get("Content-Security-Policy"); csp != "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox; frame-ancestors 'self'" {
		t.Errorf("preview CSP %q", csp)
	}
	if rec.Header().Get("X-Frame-Options") != "SAMEORIGIN" {
		t.Errorf("X-Frame-Options %q", rec.Header().Get("X-Frame-Options"))
	}
	body := rec.Body.String()
	if strings.Contains(body, "<script") || strings.Contains(body, "<b>ML") || !strings.Contains(body, `src="data:image/png;base64,`) {
		t.Errorf("preview:\n%s", body)
	}

	if v, _ := d.Find(`[data-testid=wait-until-hour] option[selected]`).Attr("value"); v != "12" {
		t.Errorf("the digest waits until %q by default, want 12", v)
	}
	rec = c.post("/settings/digest", url.Values{"enabled": {"1"}, "send_hour": {"7"}, "wait_until_hour": {"10"}, "when": {"always"},
		"recipients": {"members"}})
	wantStatus(t, rec, http.StatusSeeOther)
	set, err := b.st.DigestSettings(ctx(), org.ID)
	if err != nil || !set.Enabled || set.SendHour != 7 || set.WaitUntilHour != 10 || set.When != "always" || set.Recipients != "members" {
		t.Fatalf("settings %+v, %v", set, err)
	}
	c.get("/settings/digest")
	rec = c.post("/settings/digest", url.Values{"send_hour": {"24"}, "when": {"always"}, "recipients": {"members"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	rec = c.post("/settings/digest", url.Values{"send_hour": {"7"}, "wait_until_hour": {"noon"}, "when": {"always"}, "recipients": {"members"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)

	m := b.client(t)
	m.login(member.Email)
	wantStatus(t, m.get("/settings/digest"), http.StatusOK)
	rec = m.post("/settings/digest", url.Values{"send_hour": {"3"}, "when": {"over"}, "recipients": {"admins"}})
	wantStatus(t, rec, http.StatusForbidden)
	wantStatus(t, m.post("/settings/digest/subscription", nil), http.StatusSeeOther)
	if unsub, _ := b.st.DigestUnsubscribed(ctx(), org.ID, member.ID); !unsub {
		t.Error("the member's own unsubscribe did not hold")
	}
}
