package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// The attacks of security round two (docs/operations.md, "Security
// settings"): hostile Parquet, connections that sign in as the server or
// reach into its network, deep JSON, tokens outliving their maker's role,
// mail bent by names, invites as a spam relay, and the low ones.

// parquetRefused uploads a hostile Parquet file and wants it refused with
// want, within a few seconds.
func (a *attacker) parquetRefused(name, filename string, file []byte, want string) outcome {
	r := a.importFile(filename, file)
	return outcome{name, r.status == http.StatusUnprocessableEntity && r.took < 5*time.Second && strings.Contains(string(r.body), want),
		fmt.Sprintf("%d KB sent; %s", len(file)>>10, r)}
}

func (a *attacker) parquetDeepSchema() outcome {
	return a.parquetRefused("Parquet schema 200,000 deep", "deep.parquet", deepSchema(200_000), "elements; at most 10000 are read")
}

func (a *attacker) parquetDeepWithinBudget() outcome {
	return a.parquetRefused("Parquet schema 9,000 deep", "deep9k.parquet", deepSchema(9_000), "nests groups more than 32 deep")
}

func (a *attacker) parquetOverlapping() outcome {
	return a.parquetRefused("Parquet overlapping chunks", "overlap.parquet", overlappingChunks(2000, 2000), "its pages overlap another column's")
}

func (a *attacker) parquetPageValues() outcome {
	return a.parquetRefused("Parquet page of 2^31 values", "values.parquet", pageValuesBomb(), "a page claims 2147483647 values")
}

func (a *attacker) parquetListLength() outcome {
	return a.parquetRefused("Parquet footer list 2^31 long", "list.parquet", listLengthBomb(), "a list claims 2147483647 items")
}

func (a *attacker) parquetNestedStructs() outcome {
	return a.parquetRefused("Parquet footer 100k nested", "nested.parquet", nestedStructBomb(100_000), "values nest more than 16 deep")
}

// importTimeout uploads a gzip of millions of good rows (a megabyte sent,
// hundreds decompressed): the import must stop at IMPORT_TIMEOUT.
func (a *attacker) importTimeout() outcome {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	day := yesterday()
	fmt.Fprintln(zw, "BillingAccountId,ChargePeriodStart,ChargePeriodEnd,BilledCost,BillingCurrency,ProviderName,ServiceName,ChargeCategory")
	row := []byte(fmt.Sprintf("acct-1,%sT00:00:00Z,%sT01:00:00Z,1.25,USD,AWS,Amazon EC2,Usage\n", day, day))
	chunk := bytes.Repeat(row, 10_000)
	for range 800 { // 8 million rows
		zw.Write(chunk)
	}
	zw.Close()
	r := a.importFile("import-bomb.csv.gz", buf.Bytes())
	held := r.status == http.StatusUnprocessableEntity && strings.Contains(string(r.body), "the import took longer than") && r.took < 60*time.Second
	return outcome{"8M rows in 1 MB of gzip", held, fmt.Sprintf("%d KB sent; %s", buf.Len()>>10, r)}
}

// hostCredentials adds an S3 connection without keys: it would sign in as
// the server.
func (a *attacker) hostCredentials() outcome {
	r := a.apiRequest(http.MethodPost, "/api/v1/connections", a.tokenA, "application/json",
		strings.NewReader(`{"name":"no keys","kind":"aws-s3","bucket":"operator-billing","prefix":"cur/all"}`))
	return outcome{"S3 connection without keys", r.status == http.StatusUnprocessableEntity && bytes.Contains(r.body, []byte("does not lend its own identity")), r.String()}
}

// privateEndpoints aims connections at the server's own network, by every
// spelling: each refused when saved.
func (a *attacker) privateEndpoints() outcome {
	var got []string
	held := true
	for _, ep := range []string{"http://127.0.0.1:5432", "http://169.254.169.254", "http://[::127.0.0.1]:5432", "http://[::ffff:10.0.0.1]",
		"http://[64:ff9b::a9fe:a9fe]", "http://0.0.0.0:5432", "http://localhost:5432", "http://10.0.0.8:9000"} {
		body := fmt.Sprintf(`{"name":"p %s","kind":"aws-s3","bucket":"billing","endpoint_url":%q,"access_key_id":"AKIATESTTESTTEST","secret_access_key":"s"}`, ep, ep)
		r := a.apiRequest(http.MethodPost, "/api/v1/connections", a.tokenA, "application/json", strings.NewReader(body))
		ok := r.status == http.StatusUnprocessableEntity && bytes.Contains(r.body, []byte("endpoint_url"))
		held = held && ok
		got = append(got, fmt.Sprintf("%s→%d", strings.TrimPrefix(ep, "http://"), r.status))
	}
	sas := `{"name":"sas","kind":"azure-blob","sas_token":"http://127.0.0.1:10000/acct/costs?sv=1&sp=rl&sig=x"}`
	r := a.apiRequest(http.MethodPost, "/api/v1/connections", a.tokenA, "application/json", strings.NewReader(sas))
	held = held && r.status == http.StatusUnprocessableEntity
	got = append(got, fmt.Sprintf("SAS URL on 127.0.0.1→%d", r.status))
	return outcome{"connection endpoints inside", held, strings.Join(got, " ")}
}

// listener counts the connections made to a loopback address; it answers
// each request with answer.
type listener struct {
	addr string
	hits atomic.Int32
	srv  *http.Server
}

func listen(addr string, answer http.HandlerFunc) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &listener{addr: ln.Addr().String()}
	l.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.hits.Add(1)
		answer(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go l.srv.Serve(ln)
	return l, nil
}

func (l *listener) close() { l.srv.Close() }

// loopbackName is a host name (not localhost) that resolves to a loopback
// address here, from /etc/hosts or the machine's own name: a name the URL
// check cannot judge, which only the dial-time check catches.
func loopbackName() string {
	var names []string
	if b, err := os.ReadFile("/etc/hosts"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 1 && strings.HasPrefix(f[0], "127.") {
				names = append(names, f[1:]...)
			}
		}
	}
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "#") || strings.Contains(n, "localhost") {
			continue
		}
		if ips, err := net.LookupIP(n); err == nil && len(ips) > 0 && ips[0].IsLoopback() {
			return n
		}
	}
	return ""
}

// connection creates a connection through the API, syncs it and waits for
// its run's outcome.
func (a *attacker) syncedConnection(body string) (lastError string, err error) {
	r := a.apiRequest(http.MethodPost, "/api/v1/connections", a.tokenA, "application/json", strings.NewReader(body))
	if r.status != http.StatusCreated {
		return "", fmt.Errorf("create: %s", r)
	}
	var c struct{ ID int64 }
	json.Unmarshal(r.body, &c)
	a.apiRequest(http.MethodPost, fmt.Sprintf("/api/v1/connections/%d/sync", c.ID), a.tokenA, "", nil)
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		r := a.apiRequest(http.MethodGet, "/api/v1/connections", a.tokenA, "", nil)
		var list struct {
			Connections []struct {
				ID        int64
				LastRunAt *time.Time `json:"last_run_at"`
				LastError string     `json:"last_error"`
			}
		}
		json.Unmarshal(r.body, &list)
		for _, x := range list.Connections {
			if x.ID == c.ID && x.LastRunAt != nil {
				return x.LastError, nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return "", fmt.Errorf("connection %d did not run within 90 s", c.ID)
}

// dialTimeCheck aims a connection at a name that resolves to loopback, and
// an allowed endpoint (127.0.0.2, CONNECTIONS_ALLOW_PRIVATE) that
// redirects to 127.0.0.1: nothing reaches 127.0.0.1, and the SAS token in
// the URL shows nowhere.
func (a *attacker) dialTimeCheck() outcome {
	target, err := listen("127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) })
	if err != nil {
		return outcome{"dial-time check, redirects", false, err.Error()}
	}
	defer target.close()
	_, port, _ := net.SplitHostPort(target.addr)
	var got []string
	held := true
	if name := loopbackName(); name != "" {
		msg, err := a.syncedConnection(fmt.Sprintf(`{"name":"by name","kind":"aws-s3","bucket":"billing","endpoint_url":"http://%s:%s","access_key_id":"AKIATESTTESTTEST","secret_access_key":"s"}`, name, port))
		held = held && err == nil && strings.Contains(msg, "loopback, private or link-local")
		got = append(got, fmt.Sprintf("%s:%s → %q %v", name, port, clipText(msg, 90), err))
	} else {
		got = append(got, "no name resolves to loopback here: the name case was not tried")
	}
	redirect, err := listen("127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+target.addr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	if err != nil {
		return outcome{"dial-time check, redirects", false, err.Error()}
	}
	defer redirect.close()
	msg, err := a.syncedConnection(fmt.Sprintf(`{"name":"redirect","kind":"azure-blob","sas_token":"http://%s/acct/costs?sv=2022-11-02&sp=rl&sig=HOSTILESECRETSIG"}`, redirect.addr))
	held = held && err == nil && strings.Contains(msg, "loopback, private or link-local") && !strings.Contains(msg, "HOSTILESECRET") && redirect.hits.Load() > 0
	got = append(got, fmt.Sprintf("127.0.0.2 → 307 → 127.0.0.1: %q %v", clipText(msg, 90), err))
	held = held && target.hits.Load() == 0
	got = append(got, fmt.Sprintf("requests that reached 127.0.0.1: %d", target.hits.Load()))
	return outcome{"dial-time check, redirects", held, strings.Join(got, "; ")}
}

// errorsShowNoSecrets aims a connection at a name that does not resolve:
// its error names the host, never the URL's query or the resolver.
func (a *attacker) errorsShowNoSecrets() outcome {
	msg, err := a.syncedConnection(`{"name":"nowhere","kind":"aws-s3","bucket":"billing","prefix":"cur/x","endpoint_url":"https://burnrate-nosuch.invalid","access_key_id":"AKIATESTTESTTEST","secret_access_key":"s"}`)
	resolver := regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:53|\]:53`)
	held := err == nil && strings.Contains(msg, "burnrate-nosuch.invalid") && !strings.Contains(msg, "list-type") && !resolver.MatchString(msg)
	return outcome{"connection error wording", held, fmt.Sprintf("%q %v", msg, err)}
}

// webhookIPv4Compatible sets a webhook at IPv4-compatible and other
// spellings of private addresses, which passed the webhook check.
func (a *attacker) webhookIPv4Compatible() outcome {
	var got []string
	held := true
	for _, u := range []string{"https://[::127.0.0.1]/hook", "https://[::]/hook", "https://[::ffff:169.254.169.254]/hook", "https://[64:ff9b::a9fe:a9fe]/hook", "https://0.0.0.0/hook"} {
		r := a.form(a.browser, a.csrf, "/settings/notifications/webhook", url.Values{"url": {u}})
		held = held && r.status == http.StatusUnprocessableEntity
		got = append(got, fmt.Sprintf("%s→%d", strings.TrimPrefix(u, "https://"), r.status))
	}
	return outcome{"webhook at [::127.0.0.1]", held, strings.Join(got, " ")}
}

// form posts a browser form with its CSRF token.
func (a *attacker) form(c *http.Client, csrf, path string, v url.Values) reply {
	v.Set("_csrf", csrf)
	req, _ := http.NewRequest(http.MethodPost, a.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}

// deepJSON sends 40 KB of "[" (and a byte that is not UTF-8, which sent
// the text check down its slow path) to every route that reads JSON.
func (a *attacker) deepJSON() outcome {
	body := strings.Repeat("[", 40_000) + "\"\xff\""
	var got []string
	held := true
	for _, rt := range []struct{ method, path string }{
		{http.MethodPost, "/api/v1/budgets"}, {http.MethodPut, "/api/v1/budgets/1"}, {http.MethodPost, "/api/v1/advise"},
		{http.MethodPost, "/api/v1/breakeven"}, {http.MethodPost, "/api/v1/connections"}, {http.MethodPut, "/api/v1/tiers"},
	} {
		r := a.apiRequest(rt.method, rt.path, a.tokenA, "application/json", strings.NewReader(body))
		ok := r.status == http.StatusUnprocessableEntity && bytes.Contains(r.body, []byte("nested more than 64 levels")) && r.took < 2*time.Second
		held = held && ok
		got = append(got, fmt.Sprintf("%s %s→%d in %s", rt.method, rt.path, r.status, r.took.Round(time.Millisecond)))
	}
	return outcome{"40 KB of [ on JSON routes", held, strings.Join(got, "; ")}
}

var (
	inviteLinkRe = regexp.MustCompile(`/join/([A-Za-z0-9_-]+)`)
	tokenRe      = regexp.MustCompile(`data-testid="token-secret">(brt_[^<]+)<`)
)

// member is a second person in org A: invited as admin, signed up with a
// name that tries to add lines to mail, holding a token.
type member struct {
	email, token string
	id           string
	browser      *http.Client
	csrf         string
}

// invite makes an invite from org A's owner and returns its link's token.
func (a *attacker) invite(email, role string) (string, reply) {
	a.page("/members")
	r := a.form(a.browser, a.csrf, "/invites", url.Values{"email": {email}, "role": {role}})
	m := inviteLinkRe.FindSubmatch(r.body)
	if m == nil {
		return "", r
	}
	return string(m[1]), r
}

// newMember invites email as an admin, signs them up through the link
// with name, and has them make a token.
func (a *attacker) newMember(email, name string) (*member, error) {
	tok, r := a.invite(email, "admin")
	if tok == "" {
		return nil, fmt.Errorf("invite: %s", r)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrf, err := a.csrfToken(c, "/signup?invite="+tok)
	if err != nil {
		return nil, err
	}
	r = a.form(c, csrf, "/signup", url.Values{"invite": {tok}, "name": {name}, "email": {email}, "password": {"member-password-1"}})
	if r.status != http.StatusSeeOther {
		return nil, fmt.Errorf("sign up through the invite: %s", r)
	}
	m := &member{email: email, browser: c}
	if m.csrf, err = a.csrfToken(c, "/tokens"); err != nil {
		return nil, err
	}
	r = a.form(c, m.csrf, "/tokens", url.Values{"name": {"script"}})
	t := tokenRe.FindSubmatch(r.body)
	if t == nil {
		return nil, fmt.Errorf("make a token: %s", r)
	}
	m.token = string(t[1])
	members := a.page("/members")
	row := regexp.MustCompile(`<td>` + regexp.QuoteMeta(email) + `</td>[\s\S]*?/members/(\d+)/role`).FindSubmatch(members.body)
	if row == nil {
		return nil, fmt.Errorf("no row for %s on /members", email)
	}
	m.id = string(row[1])
	return m, nil
}

// demotedToken: an admin's token, the admin then demoted to member, then
// removed. Before the fix the token kept admin powers, and the connection
// routes checked no role at all.
func (a *attacker) demotedToken() outcome {
	m, err := a.newMember("hostile-admin@example.com", "Admin Two")
	if err != nil {
		return outcome{"demoted admin's token", false, err.Error()}
	}
	try := func() reply {
		return a.apiRequest(http.MethodPost, "/api/v1/connections", m.token, "application/json", strings.NewReader(`{"name":"","kind":"openai"}`))
	}
	before := try()
	a.page("/members")
	a.form(a.browser, a.csrf, "/members/"+m.id+"/role", url.Values{"role": {"member"}})
	after := try()
	tiers := a.apiRequest(http.MethodPut, "/api/v1/tiers", m.token, "application/json", strings.NewReader(`{}`))
	del := a.apiRequest(http.MethodDelete, "/api/v1/imports/1", m.token, "", nil)
	a.form(a.browser, a.csrf, "/members/"+m.id+"/remove", url.Values{})
	gone := a.apiRequest(http.MethodGet, "/api/v1/org", m.token, "", nil)
	held := before.status == http.StatusUnprocessableEntity && after.status == http.StatusForbidden && tiers.status == http.StatusForbidden &&
		del.status == http.StatusForbidden && gone.status == http.StatusUnauthorized
	return outcome{"demoted admin's token", held, fmt.Sprintf("as admin: add connection %d; demoted: add connection %d, tiers %d, delete import %d; removed: %d",
		before.status, after.status, tiers.status, del.status, gone.status)}
}

// crlfNames signs a member up with a name that breaks lines, and an org
// whose name does; neither keeps the break.
func (a *attacker) crlfNames() outcome {
	m, err := a.newMember("hostile-crlf@example.com", "Eve\r\nReply-To: evil@example.com")
	if err != nil {
		return outcome{"CRLF in names", false, err.Error()}
	}
	page := a.page("/members")
	kept := bytes.Contains(page.body, []byte("Eve Reply-To: evil@example.com"))
	broken := bytes.Contains(page.body, []byte("Eve\r\nReply-To")) || bytes.Contains(page.body, []byte("Eve\nReply-To"))
	a.form(a.browser, a.csrf, "/members/"+m.id+"/remove", url.Values{})
	// scripts/hostile made org A as "Org A\r\nBcc: evil@example.com".
	org := a.page("/settings")
	orgKept := bytes.Contains(org.body, []byte(`value="Org A Bcc: evil@example.com"`))
	return outcome{"CRLF in names", kept && !broken && orgKept, fmt.Sprintf("member's name on one line: %v, line break kept: %v; org's name on one line: %v", kept, broken, orgKept)}
}

// inviteSpam withdraws and resends an invite to one address five times.
func (a *attacker) inviteSpam() outcome {
	var codes []int
	for range 5 {
		_, r := a.invite("spam-victim@example.com", "viewer")
		codes = append(codes, r.status)
		for _, id := range regexp.MustCompile(`/invites/(\d+)/delete`).FindAllSubmatch(a.page("/members").body, -1) {
			a.form(a.browser, a.csrf, "/invites/"+string(id[1])+"/delete", url.Values{})
		}
	}
	return outcome{"invite, withdraw, repeat x5", fmt.Sprint(codes) == "[201 201 201 429 429]", fmt.Sprintf("answers %v", codes)}
}

// inviteOtherUser opens an invite for one address while logged in as
// another.
func (a *attacker) inviteOtherUser() outcome {
	tok, r := a.invite("bob-invited@example.com", "admin")
	if tok == "" {
		return outcome{"invite accepted by another", false, r.String()}
	}
	m, err := a.newMember("hostile-other@example.com", "Mallory")
	if err != nil {
		return outcome{"invite accepted by another", false, err.Error()}
	}
	defer a.form(a.browser, a.csrf, "/members/"+m.id+"/remove", url.Values{})
	show := do(m.browser, must(http.NewRequest(http.MethodGet, a.base+"/join/"+tok, nil)))
	csrf, _ := a.csrfToken(m.browser, "/join/"+tok)
	accept := a.form(m.browser, csrf, "/join/"+tok, url.Values{})
	held := bytes.Contains(show.body, []byte("invite-other-address")) && accept.status == http.StatusForbidden
	return outcome{"invite accepted by another", held, fmt.Sprintf("page warns: %v; accepting as hostile-other@: %s", bytes.Contains(show.body, []byte("invite-other-address")), accept)}
}

// signupEnumeration signs up with a new address and with org A owner's:
// the answers, and whether either logs in, must not differ.
func (a *attacker) signupEnumeration() outcome {
	try := func(email string) (reply, bool) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		csrf, _ := a.csrfToken(c, "/signup")
		r := a.form(c, csrf, "/signup", url.Values{"name": {"Probe"}, "email": {email}, "password": {"probe-password-1"}, "org_name": {"Probe"}})
		dash := do(c, must(http.NewRequest(http.MethodGet, a.base+"/dashboard", nil)))
		return r, dash.status == http.StatusOK
	}
	fresh, freshIn := try(fmt.Sprintf("probe-%d@example.com", time.Now().UnixNano()))
	known, knownIn := try(a.email)
	same := fresh.status == known.status && fresh.header.Get("Location") == known.header.Get("Location") && bytes.Equal(fresh.body, known.body) && freshIn == knownIn
	return outcome{"sign-up tells who has an account", same, fmt.Sprintf("new: %d → %s, logged in %v; registered: %d → %s, logged in %v",
		fresh.status, fresh.header.Get("Location"), freshIn, known.status, known.header.Get("Location"), knownIn)}
}

// lookalikes invites an address whose domain mixes alphabets, and uploads
// a file whose name reverses itself.
func (a *attacker) lookalikes() outcome {
	_, inv := a.invite("bob@pаypal.com", "viewer") // Cyrillic а
	r := a.importFile("invoice\u202ecsv.exe", litellmLog("req-bidi", yesterday(), "openai", "gpt-4o", "ml", "u"))
	var res struct {
		FileName string `json:"file_name"`
	}
	json.Unmarshal(r.body, &res)
	held := inv.status == http.StatusUnprocessableEntity && r.status == http.StatusCreated && res.FileName == "invoicecsv.exe"
	return outcome{"lookalike domain, U+202E name", held, fmt.Sprintf("invite to pаypal.com: %d; file kept as %q", inv.status, res.FileName)}
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
