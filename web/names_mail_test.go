package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// outboxTexts returns the plain text of every mail of kind in the outbox,
// oldest first.
func outboxTexts(t *testing.T, b *mailBundle, kind string) []string {
	t.Helper()
	rows, err := b.st.Pool().Query(ctx(), `SELECT message FROM outbox WHERE kind = $1 ORDER BY id`, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var m struct{ Subject, Text string }
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Subject+"\n"+m.Text)
	}
	return out
}

// TestNamesCannotBendMail: a sign-up name and org name with line breaks
// (fake "Reply-To:" lines in an invite's plain text) and a bidirectional
// override are kept without them; the invite they send shows no line of
// theirs of its own.
func TestNamesCannotBendMail(t *testing.T) {
	t.Parallel()
	b := setupMail(t, false)
	c := b.client(t)
	c.get("/signup")
	rec := c.post("/signup", url.Values{"name": {"Ann\r\nReply-To: evil@example.com"}, "email": {"ann@example.com"},
		"password": {"a long password"}, "org_name": {"Acme\nClick here: https://evil.example/\u202eexe.pdf"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-up: %d %s", rec.Code, rec.Body)
	}
	u, err := b.st.UserByEmail(ctx(), "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	orgs, err := b.st.OrgsForUser(ctx(), u.ID)
	if err != nil || len(orgs) != 1 {
		t.Fatalf("orgs %v, %v", orgs, err)
	}
	if u.Name != "Ann Reply-To: evil@example.com" || orgs[0].Name != "Acme Click here: https://evil.example/exe.pdf" {
		t.Fatalf("kept name %q, org %q", u.Name, orgs[0].Name)
	}
	c.get("/members")
	rec = c.post("/invites", url.Values{"email": {"bob@example.com"}, "role": {"member"}})
	wantStatus(t, rec, http.StatusCreated)
	texts := outboxTexts(t, b, "invite")
	if len(texts) != 1 || !strings.Contains(texts[0], "Ann Reply-To: evil@example.com invited you to Acme Click here") {
		t.Fatalf("invites in the outbox: %q", texts)
	}
	for line := range strings.SplitSeq(texts[0], "\n") {
		if strings.HasPrefix(line, "Reply-To:") || strings.HasPrefix(line, "Click here:") || strings.ContainsRune(line, '\u202e') {
			t.Errorf("the invite has a line of the attacker's own: %q", line)
		}
	}
	// Every other name typed goes through the same cleaning.
	c.get("/tokens")
	c.post("/tokens", url.Values{"name": {"ci\r\nX-Evil: 1"}})
	toks, err := b.st.APITokens(ctx(), orgs[0].ID)
	if err != nil || len(toks) != 1 || toks[0].Name != "ci X-Evil: 1" {
		t.Fatalf("token names %+v, %v", toks, err)
	}
}

// TestInvitesAreLimited: withdrawing an invite and sending it again, to
// one address, mails it at most three times a day (five cycles sent five
// mails); an org sends at most thirty a day, withdrawn ones counted.
func TestInvitesAreLimited(t *testing.T) {
	t.Parallel()
	b := setupMail(t, false)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	var codes []int
	for range 5 {
		c.get("/members")
		rec := c.post("/invites", url.Values{"email": {"victim@example.com"}, "role": {"member"}})
		codes = append(codes, rec.Code)
		if rec.Code == http.StatusTooManyRequests && !strings.Contains(rec.Body.String(), "an address gets at most 3 a day") {
			t.Errorf("refusal says %s", rec.Body)
		}
		invs, err := b.st.Invites(ctx(), org.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, inv := range invs {
			c.post("/invites/"+itoa(inv.ID)+"/delete", nil)
		}
	}
	if fmt.Sprint(codes) != "[201 201 201 429 429]" {
		t.Errorf("five invite-withdraw cycles answered %v", codes)
	}
	if n := len(outboxTexts(t, b, "invite")); n != web.MaxInvitesPerAddressDay {
		t.Errorf("%d invites mailed to one address, want %d", n, web.MaxInvitesPerAddressDay)
	}
	// Another org cannot add to that address's mail either.
	_, other := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Other"})
	c2 := b.client(t)
	c2.login(other.Email)
	c2.get("/members")
	if rec := c2.post("/invites", url.Values{"email": {"VICTIM@example.com"}, "role": {"member"}}); rec.Code != http.StatusTooManyRequests {
		t.Errorf("another org inviting the same address: %d", rec.Code)
	}
	// The org's own limit: 27 more addresses (3 sent already), then no more.
	for i := range web.MaxInvitesPerOrgDay - web.MaxInvitesPerAddressDay {
		if rec := c.post("/invites", url.Values{"email": {fmt.Sprintf("p%d@example.com", i)}, "role": {"viewer"}}); rec.Code != http.StatusCreated {
			t.Fatalf("invite %d: %d", i, rec.Code)
		}
	}
	if rec := c.post("/invites", url.Values{"email": {"one-more@example.com"}, "role": {"viewer"}}); rec.Code != http.StatusTooManyRequests {
		t.Errorf("invite %d of the day: %d", web.MaxInvitesPerOrgDay+1, rec.Code)
	}
}

// TestInviteJoinsOnlyItsAddress: an invite link opened while logged in as
// someone else says so and joins nobody; accepting it anyway is refused;
// signing up through it takes the invited address only.
func TestInviteJoinsOnlyItsAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Invites"})
	_, token, err := b.st.CreateInvite(ctx(), org.ID, "bob@example.com", access.Admin, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	eve := storetest.User(t, b.st, storetest.UserOpts{Email: "eve@example.com"})
	c := b.client(t)
	c.login(eve.Email)
	rec := c.get("/join/" + token)
	wantStatus(t, rec, http.StatusOK)
	page := doc(t, rec)
	if page.Find(`[data-testid=accept-invite]`).Length() != 0 || !strings.Contains(page.Find(`[data-testid=invite-other-address]`).Text(), "sent to bob@example.com") {
		t.Errorf("the invite page offers eve to join bob's invite:\n%s", rec.Body)
	}
	rec = c.post("/join/"+token, nil)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "This invite was sent to bob@example.com, and you are eve@example.com") {
		t.Errorf("accepting bob's invite as eve: %d %s", rec.Code, rec.Body)
	}
	if orgs, _ := b.st.OrgsForUser(ctx(), eve.ID); len(orgs) != 0 {
		t.Fatalf("eve joined %v", orgs)
	}
	s := b.client(t)
	s.get("/signup")
	rec = s.post("/signup", url.Values{"name": {"Eve"}, "email": {"eve2@example.com"}, "password": {"a long password"}, "invite": {token}})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "sent to bob@example.com") {
		t.Errorf("signing up as eve2 through bob's invite: %d", rec.Code)
	}
	bob := storetest.User(t, b.st, storetest.UserOpts{Email: "Bob@Example.com"})
	cb := b.client(t)
	cb.login(bob.Email)
	cb.get("/join/" + token)
	if rec := cb.post("/join/"+token, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("bob accepting: %d %s", rec.Code, rec.Body)
	}
}

// TestLookalikesRefusedAndBidiStripped: an address whose domain mixes
// alphabets is refused where addresses come in; a file name with a
// bidirectional override is kept and shown without it.
func TestLookalikesRefusedAndBidiStripped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.get("/signup")
	rec := c.post("/signup", url.Values{"name": {"Ann"}, "email": {"ann@pаypal.com"}, "password": {"a long password"}})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "mixes alphabets") {
		t.Errorf("sign-up with a Cyrillic а in the domain: %d", rec.Code)
	}
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	oc := b.client(t)
	oc.login(owner.Email)
	oc.get("/members")
	if rec := oc.post("/invites", url.Values{"email": {"bob@gοogle.com"}, "role": {"member"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("invite to a Greek ο domain: %d", rec.Code)
	}
	_, secret, err := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports?filename="+url.QueryEscape("invoice\u202elsx.csv"), bytes.NewReader([]byte("x,y\n1,2\n")))
	req.Header.Set("Authorization", "Bearer "+secret)
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	if strings.ContainsRune(rec.Body.String(), '\u202e') || !strings.Contains(rec.Body.String(), "invoicelsx.csv") {
		t.Errorf("import answer: %d %s", rec.Code, rec.Body)
	}
	imps, err := b.st.Imports(ctx(), org.ID, 5)
	if err != nil || len(imps) != 1 || imps[0].FileName != "invoicelsx.csv" {
		t.Fatalf("imports %+v, %v", imps, err)
	}
}
