// Command hostile replays every attack ever found against a running
// Burnrate on loopback (security rounds one and two) and prints a table:
// the attack, what the server should do, what it did, and whether it held
// (see scripts/hostile, which starts the server and two orgs for it):
//
//	hostile -base URL -email E -password P -token T -token-b TB -pid PID
//
// Every request loop is bounded in count and time, and every address it
// talks to is the -base server, which must be on the loopback range, or a
// listener of its own on loopback that a hostile connection aims at. While
// the attacks run, /healthz is polled; the last lines give the server's
// peak RSS (VmHWM of -pid), the longest single request, and whether
// /healthz stayed green. It exits 1 when any attack got through.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hostileName is stored in every dimension and a budget name; if it ever
// ran in a browser it would set window.__pwned.
const hostileName = `<img src=x onerror="window.__pwned=1">`

type attacker struct {
	base     string
	email    string
	password string
	tokenA   string // org A: the attacker's org
	tokenB   string // org B: a bystander whose requests must keep working
	api      *http.Client
	browser  *http.Client // logged in as org A's owner
	csrf     string
}

// outcome is one printed line: the attack, whether the server held, and
// what it answered.
type outcome struct {
	name string
	held bool
	what string
}

// attack is one row of the table: its name is the outcome's.
type attack struct {
	expected string
	run      func() outcome
}

func main() {
	a := &attacker{api: &http.Client{Timeout: 120 * time.Second, Transport: timed}}
	flag.StringVar(&a.base, "base", "http://127.0.0.1:8080", "the server (loopback only)")
	flag.StringVar(&a.email, "email", "", "org A owner's email")
	flag.StringVar(&a.password, "password", "", "org A owner's password")
	flag.StringVar(&a.tokenA, "token", "", "org A's API token")
	flag.StringVar(&a.tokenB, "token-b", "", "org B's API token")
	pid := flag.Int("pid", 0, "the server's process id, for its peak RSS")
	slowFor := flag.Duration("slow-for", 40*time.Second, "how long the slow clients keep trying")
	flag.Parse()
	if err := a.check(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(2)
	}

	health := watchHealth(a.base)
	var results []outcome
	attacks := []attack{
		// Round one.
		{"escaped in pages; no inline script", a.xssImport},
		{"created, escaped where shown", a.xssBudget},
		{"formula cells get a leading '", a.csvFormulas},
		{"422 naming amount, < 2 s", a.hugeBudget},
		{"422 naming overhead, < 2 s", a.hugeBreakEven},
		{"422 naming tokens, < 2 s", a.hugeAdvisor},
		{"422 at its line, < 2 s", a.hugeCSVCell},
		{"4xx, memory bounded", a.gzipBomb},
		{"422 at its line", a.invalidUTF8},
		{"422 at its line", a.nulCell},
		{"422", a.nulFilename},
		{"422 at its line", a.raggedRows},
		{"422 at its line", a.ancientDates},
		{"local paths only", a.openRedirect},
		{"403 or 400", a.csrfInQuery},
		{"401, 403 or 404", a.publicMetrics},
		{"422", a.blankPassword},
		{"others unaffected, slow sockets cut", func() outcome { return a.slowUploads(*slowFor) }},
		{"10 tried, the rest 429", a.concurrentLogins},
		{"limit per address holds", a.forwardedForRotation},
		// Round two.
		{"422 from the footer, < 5 s", a.parquetDeepSchema},
		{"422 from the footer, < 5 s", a.parquetDeepWithinBudget},
		{"422 from the footer, < 5 s", a.parquetOverlapping},
		{"422 before any page, < 5 s", a.parquetPageValues},
		{"422 from the footer, < 5 s", a.parquetListLength},
		{"422 from the footer, < 5 s", a.parquetNestedStructs},
		{"422 at IMPORT_TIMEOUT, nothing kept", a.importTimeout},
		{"422: no host identity lent", a.hostCredentials},
		{"422 naming endpoint_url, each", a.privateEndpoints},
		{"refused after DNS and on redirect; 0 hits", a.dialTimeCheck},
		{"host named; no query, no resolver", a.errorsShowNoSecrets},
		{"422, each", a.webhookIPv4Compatible},
		{"422 before decoding, < 2 s, each", a.deepJSON},
		{"403 once demoted, 401 once removed", a.demotedToken},
		{"kept on one line", a.crlfNames},
		{"3 sent, then 429", a.inviteSpam},
		{"warned, 403, not joined", a.inviteOtherUser},
		{"same answer, no log-in either way", a.signupEnumeration},
		{"422; name kept without U+202E", a.lookalikes},
	}
	fmt.Printf("%-34s | %-42s | %-6s | %s\n", "attack", "expected", "held", "got")
	fmt.Println(strings.Repeat("-", 34) + "-+-" + strings.Repeat("-", 42) + "-+-" + strings.Repeat("-", 6) + "-+-" + strings.Repeat("-", 60))
	for _, at := range attacks {
		o := at.run()
		results = append(results, o)
		fmt.Printf("%-34s | %-42s | %-6s | %s\n", o.name, at.expected, verdictOf(o.held), o.what)
	}
	checks, fails := health.stop()
	fmt.Println()
	fmt.Printf("%-34s | %-42s | %-6s | %d checks, %d failed or slower than 2 s\n", "healthz during attacks", "every check 200 within 2 s", verdictOf(fails == 0), checks, fails)
	if *pid > 0 {
		fmt.Printf("%-34s   %s\n", "server peak RSS", peakRSS(*pid))
	}
	d, what := timed.longest()
	fmt.Printf("%-34s   %s (%s; the slow-upload sockets excepted)\n", "longest single request", d.Round(time.Millisecond), what)
	held := 0
	for _, o := range results {
		if o.held {
			held++
		}
	}
	fmt.Printf("%-34s   %d of %d\n", "attacks held", held, len(results))
	if held < len(results) || fails > 0 {
		os.Exit(1)
	}
}

func verdictOf(ok bool) string {
	if ok {
		return "HELD"
	}
	return "FAILED"
}

// check refuses any target off the loopback range and logs org A's owner in.
func (a *attacker) check() error {
	u, err := url.Parse(a.base)
	if err != nil {
		return err
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-base %s is not on loopback; this tool only attacks a server on this machine", a.base)
	}
	if a.tokenA == "" || a.tokenB == "" || a.email == "" || a.password == "" {
		return errors.New("-email, -password, -token and -token-b are required")
	}
	a.browser, a.csrf, err = a.login(a.email, a.password)
	return err
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

// login logs a cookie-keeping client in through the log-in form and returns
// it with the page's CSRF token.
func (a *attacker) login(email, password string) (*http.Client, string, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token, err := a.csrfToken(c, "/login")
	if err != nil {
		return nil, "", err
	}
	res, err := c.PostForm(a.base+"/login", url.Values{"_csrf": {token}, "email": {email}, "password": {password}})
	if err != nil {
		return nil, "", err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, "", fmt.Errorf("log in as %s: status %d", email, res.StatusCode)
	}
	token, err = a.csrfToken(c, "/dashboard")
	return c, token, err
}

func (a *attacker) csrfToken(c *http.Client, path string) (string, error) {
	res, err := c.Get(a.base + path)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfMeta.FindSubmatch(body)
	if m == nil {
		return "", fmt.Errorf("no CSRF token on %s (status %d)", path, res.StatusCode)
	}
	return string(m[1]), nil
}

// reply is a response read whole, with how long it took.
type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
	err    error
}

func (r reply) String() string {
	if r.err != nil {
		return fmt.Sprintf("error %v after %s", r.err, r.took.Round(time.Millisecond))
	}
	msg := string(r.body)
	if strings.HasPrefix(msg, "<!doctype") {
		msg = "an HTML page"
		if m := pageMessage.FindStringSubmatch(string(r.body)); m != nil {
			msg = html.UnescapeString(m[1])
		}
	}
	var e struct {
		Error  string `json:"error"`
		Line   int    `json:"line"`
		Column string `json:"column"`
	}
	if json.Unmarshal(r.body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if len(msg) > 110 {
		msg = msg[:110] + "…"
	}
	return fmt.Sprintf("%d in %s: %s", r.status, r.took.Round(time.Millisecond), strings.Join(strings.Fields(msg), " "))
}

// pageMessage is an error page's message.
var pageMessage = regexp.MustCompile(`data-testid="error">\s*<header><strong>\d+</strong></header>\s*<p>([^<]+)</p>`)

func do(c *http.Client, req *http.Request) reply {
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return reply{err: err, took: time.Since(start)}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	return reply{status: res.StatusCode, header: res.Header, body: body, took: time.Since(start), err: err}
}

func (a *attacker) apiRequest(method, path, token, contentType string, body io.Reader) reply {
	req, _ := http.NewRequest(method, a.base+path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(a.api, req)
}

func (a *attacker) importFile(filename string, body []byte) reply {
	return a.apiRequest(http.MethodPost, "/api/v1/imports?filename="+url.QueryEscape(filename), a.tokenA, "text/csv", bytes.NewReader(body))
}

func (a *attacker) page(path string) reply {
	req, _ := http.NewRequest(http.MethodGet, a.base+path, nil)
	return do(a.browser, req)
}

// litellmLog is a LiteLLM spend log of one request on day with the given
// provider, model, team alias and user.
func litellmLog(id, day, provider, model, team, user string) []byte {
	var b bytes.Buffer
	b.WriteString("request_id,call_type,api_key,spend,total_tokens,prompt_tokens,completion_tokens,startTime,endTime,model,custom_llm_provider,user,metadata,team_id,status\n")
	meta := `{"user_api_key_team_alias": "` + strings.ReplaceAll(team, `"`, `\"`) + `"}`
	fmt.Fprintf(&b, "%s,acompletion,key1,12.50,3000,2000,1000,%s 09:00:00+00,%s 09:00:02+00,%s,%s,%s,%s,team-1,success\n",
		id, day, day, csvQuote(model), csvQuote(provider), csvQuote(user), csvQuote(meta))
	return b.Bytes()
}

func csvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func yesterday() string { return time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly) }

func (a *attacker) xssImport() outcome {
	r := a.importFile("hostile.csv", litellmLog("req-xss-1", yesterday(), hostileName, hostileName, hostileName, hostileName))
	if r.status != http.StatusCreated {
		return outcome{"hostile names (import)", false, "import: " + r.String()}
	}
	var stored, unescaped []string
	for _, group := range []string{"provider", "model", "team"} {
		page := a.page("/dashboard?range=30d&group=" + group)
		if bytes.Contains(page.body, []byte(hostileName)) {
			unescaped = append(unescaped, group)
		}
		data := a.page("/dashboard?range=30d&format=json&group=" + group)
		if bytes.Contains(data.body, []byte(`\u003cimg src=x onerror=`)) || bytes.Contains(data.body, []byte(`<img src=x onerror=`)) {
			stored = append(stored, group)
		}
	}
	csp := a.page("/dashboard").header.Get("Content-Security-Policy")
	scriptSrc := cspDirective(csp, "script-src")
	held := len(unescaped) == 0 && !strings.Contains(scriptSrc, "unsafe-inline")
	return outcome{"hostile names (import)", held, fmt.Sprintf("stored as data in %v; unescaped in page HTML for %v; CSP %q (the Chromium test hovers every series)", stored, unescaped, scriptSrc)}
}

func cspDirective(csp, name string) string {
	for d := range strings.SplitSeq(csp, ";") {
		d = strings.TrimSpace(d)
		if strings.HasPrefix(d, name+" ") {
			return d
		}
	}
	return ""
}

func (a *attacker) xssBudget() outcome {
	body := `{"name":` + jsonString(hostileName) + `,"amount":"1","period":"monthly"}`
	r := a.apiRequest(http.MethodPost, "/api/v1/budgets", a.tokenA, "application/json", strings.NewReader(body))
	if r.status != http.StatusCreated {
		return outcome{"hostile budget name", false, "create: " + r.String()}
	}
	page := a.page("/budgets")
	dash := a.page("/dashboard?range=30d")
	held := !bytes.Contains(page.body, []byte(hostileName)) && !bytes.Contains(dash.body, []byte(hostileName))
	return outcome{"hostile budget name", held, "created (201); escaped on /budgets and /dashboard: " + fmt.Sprint(held)}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func (a *attacker) csvFormulas() outcome {
	formulas := []string{`=HYPERLINK("http://evil.example","x")`, "+1+1", "@SUM(A1)", "-2+3", "\t=1", "\r=1"}
	for i, f := range formulas {
		r := a.importFile(fmt.Sprintf("formula-%d.csv", i), litellmLog(fmt.Sprintf("req-formula-%d", i), yesterday(), f, "gpt-4o", "ml", "u"))
		if r.status != http.StatusCreated {
			return outcome{"CSV formula injection", false, "import: " + r.String()}
		}
	}
	r := a.page("/dashboard?range=30d&group=provider&format=csv&table=drivers")
	var live []string
	for line := range strings.SplitSeq(string(r.body), "\n") {
		first, _, _ := strings.Cut(line, ",")
		first = strings.TrimPrefix(first, `"`)
		if first != "" && strings.ContainsAny(first[:1], "=+@\t\r") || strings.HasPrefix(first, "-2") {
			live = append(live, first)
		}
	}
	return outcome{"CSV formula injection", r.status == http.StatusOK && len(live) == 0,
		fmt.Sprintf("drivers CSV %d; cells that would run as formulas: %q", r.status, live)}
}

// bounded says whether r was refused quickly with a 4xx naming field.
func bounded(r reply, field string) bool {
	return r.status >= 400 && r.status < 500 && r.took < 2*time.Second && bytes.Contains(r.body, []byte(field))
}

func (a *attacker) hugeBudget() outcome {
	r := a.apiRequest(http.MethodPost, "/api/v1/budgets", a.tokenA, "application/json", strings.NewReader(`{"name":"huge","amount":"1e999999999"}`))
	return outcome{"amount 1e999999999", bounded(r, "amount"), r.String()}
}

func (a *attacker) hugeBreakEven() outcome {
	r := a.apiRequest(http.MethodPost, "/api/v1/breakeven", a.tokenA, "application/json",
		strings.NewReader(`{"model":"gpt-4.1-mini","input_tokens":3e8,"output_tokens":1e8,"overhead_month_usd":"1e10000000"}`))
	page := a.page("/breakeven?overhead_month_usd=1e10000000")
	return outcome{"overhead 1e10000000", bounded(r, "overhead") && page.status < 500 && page.took < 2*time.Second,
		"API " + r.String() + " | page " + fmt.Sprint(page.status, " in ", page.took.Round(time.Millisecond))}
}

func (a *attacker) hugeAdvisor() outcome {
	page := a.page("/advisor?job=serving&model=llama-3.1-8b&tokens=1e308")
	r := a.apiRequest(http.MethodPost, "/api/v1/advise", a.tokenA, "application/json", strings.NewReader(`{"job":"qlora","model":"llama-3.1-70b","tokens":1e308}`))
	return outcome{"tokens 1e308", page.status < 500 && bounded(r, "tokens"), fmt.Sprintf("page %d in %s | API %s", page.status, page.took.Round(time.Millisecond), r)}
}

func (a *attacker) hugeCSVCell() outcome {
	r := a.importFile("huge.csv", bytes.Replace(litellmLog("req-huge", yesterday(), "openai", "gpt-4o", "ml", "u"), []byte("12.50"), []byte("1e999999999"), 1))
	return outcome{"cost cell 1e999999999", r.status == http.StatusUnprocessableEntity && r.took < 2*time.Second && bytes.Contains(r.body, []byte(`"line"`)), r.String()}
}

// gzipBomb sends 1 GiB of one unending CSV line compressed to about 1 MB.
func (a *attacker) gzipBomb() outcome {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte("request_id,call_type,api_key,spend,total_tokens,prompt_tokens,completion_tokens,startTime,endTime,model,custom_llm_provider,user,metadata,team_id,status\nx,"))
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for range 1024 {
		zw.Write(chunk)
	}
	zw.Close()
	r := a.importFile("bomb.csv.gz", buf.Bytes())
	return outcome{"gzip bomb (1 GiB line)", r.status >= 400 && r.status < 500, fmt.Sprintf("%d KB sent; %s", buf.Len()>>10, r)}
}

func (a *attacker) rejectedAt(name, filename string, body []byte) outcome {
	r := a.importFile(filename, body)
	return outcome{name, r.status == http.StatusUnprocessableEntity && bytes.Contains(r.body, []byte(`"line"`)), r.String()}
}

func (a *attacker) invalidUTF8() outcome {
	return a.rejectedAt("invalid UTF-8 in a cell", "latin1.csv", litellmLog("req-latin1", yesterday(), "openai", "gpt-4o", "caf\xe9", "u"))
}

func (a *attacker) nulCell() outcome {
	return a.rejectedAt("NUL in a cell", "nul.csv", litellmLog("req-nul", yesterday(), "openai", "gpt\x00-4o", "ml", "u"))
}

func (a *attacker) nulFilename() outcome {
	r := a.importFile("bills\x00.csv", litellmLog("req-nulname", yesterday(), "openai", "gpt-4o", "ml", "u"))
	return outcome{"NUL in ?filename=", r.status == http.StatusUnprocessableEntity, r.String()}
}

func (a *attacker) raggedRows() outcome {
	// A whole row and one field more than the header names.
	body := bytes.TrimSuffix(litellmLog("req-ragged", yesterday(), "openai", "gpt-4o", "ml", "u"), []byte("\n"))
	return a.rejectedAt("ragged row", "ragged.csv", append(body, ",extra\n"...))
}

func (a *attacker) ancientDates() outcome {
	return a.rejectedAt("date in 1970", "1970.csv", litellmLog("req-1970", "1970-01-01", "openai", "gpt-4o", "ml", "u"))
}

func (a *attacker) openRedirect() outcome {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token, err := a.csrfToken(c, "/login")
	if err != nil {
		return outcome{"open redirect after log-in", false, err.Error()}
	}
	var bad []string
	for _, next := range []string{"/\t/evil.example", "//evil.example", `/\evil.example`, "https://evil.example", "javascript:alert(1)"} {
		res, err := c.PostForm(a.base+"/login?next="+url.QueryEscape(next), url.Values{"_csrf": {token}, "email": {a.email}, "password": {a.password}, "next": {next}})
		if err != nil {
			return outcome{"open redirect after log-in", false, err.Error()}
		}
		res.Body.Close()
		loc := res.Header.Get("Location")
		if u, err := url.Parse(strings.TrimSpace(loc)); err != nil || u.Host != "" || u.Scheme != "" || strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, "\\\t") {
			bad = append(bad, fmt.Sprintf("%q→%q", next, loc))
		}
	}
	return outcome{"open redirect after log-in", len(bad) == 0, fmt.Sprintf("5 hostile next= values; off-site redirects: %v", bad)}
}

func (a *attacker) csrfInQuery() outcome {
	req, _ := http.NewRequest(http.MethodPost, a.base+"/budgets?_csrf="+url.QueryEscape(a.csrf), strings.NewReader("name=viaquery&amount=5&period=monthly&currency=USD"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := do(a.browser, req)
	return outcome{"CSRF token in the query", r.status == http.StatusForbidden || r.status == http.StatusBadRequest, r.String()}
}

func (a *attacker) publicMetrics() outcome {
	r := do(a.api, must(http.NewRequest(http.MethodGet, a.base+"/metrics", nil)))
	return outcome{"/metrics without a token", r.status == http.StatusUnauthorized || r.status == http.StatusNotFound || r.status == http.StatusForbidden, fmt.Sprint(r.status)}
}

func (a *attacker) blankPassword() outcome {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token, err := a.csrfToken(c, "/signup")
	if err != nil {
		return outcome{"password of ten spaces", false, err.Error()}
	}
	res, err := c.PostForm(a.base+"/signup", url.Values{"_csrf": {token}, "email": {"spaces@example.com"}, "password": {"          "}, "name": {"Spaces"}, "org_name": {"Spaces"}})
	if err != nil {
		return outcome{"password of ten spaces", false, err.Error()}
	}
	res.Body.Close()
	return outcome{"password of ten spaces", res.StatusCode == http.StatusUnprocessableEntity || res.StatusCode == http.StatusBadRequest, fmt.Sprint("sign-up answered ", res.StatusCode)}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// slowUploads opens 20 uploads to org A that send one byte a second while
// org B asks for its spend and the server for its health; it reports how
// B's requests fared and what became of the slow sockets.
func (a *attacker) slowUploads(dur time.Duration) outcome {
	host := strings.TrimPrefix(strings.TrimPrefix(a.base, "http://"), "https://")
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var cut atomic.Int64 // slow sockets the server answered or closed before dur
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", host, 5*time.Second)
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /api/v1/imports?filename=slow-%d.csv HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: text/csv\r\nContent-Length: 100000\r\n\r\n", i, host, a.tokenA)
			closed := make(chan struct{})
			go func() {
				buf := make([]byte, 512)
				conn.SetReadDeadline(time.Now().Add(dur))
				conn.Read(buf) // an answer, a close or the deadline
				close(closed)
			}()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-closed:
					if ctx.Err() == nil {
						cut.Add(1)
					}
					return
				case <-tick.C:
					if _, err := conn.Write([]byte("x")); err != nil {
						cut.Add(1)
						return
					}
				}
			}
		})
	}
	// Org B, meanwhile: its spend every 200 ms for the whole run.
	var lat []time.Duration
	var errs int
	spend := "/api/v1/spend?from=" + time.Now().UTC().AddDate(0, 0, -30).Format(time.DateOnly) + "&to=" + time.Now().UTC().Format(time.DateOnly)
	client := &http.Client{Timeout: 5 * time.Second, Transport: timed}
	for ctx.Err() == nil {
		req, _ := http.NewRequest(http.MethodGet, a.base+spend, nil)
		req.Header.Set("Authorization", "Bearer "+a.tokenB)
		r := do(client, req)
		if r.err != nil || r.status != http.StatusOK {
			errs++
		}
		lat = append(lat, r.took)
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
	slices.Sort(lat)
	p95 := lat[len(lat)*95/100]
	return outcome{"20 slow uploads (1 byte/s)", errs == 0 && p95 < time.Second,
		fmt.Sprintf("org B spend: %d requests, %d errors, p95 %s, max %s; slow sockets cut by the server within %s: %d of 20",
			len(lat), errs, p95.Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), dur, cut.Load())}
}

// concurrentLogins sends 60 wrong passwords for one email at once.
func (a *attacker) concurrentLogins() outcome {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token, err := a.csrfToken(c, "/login")
	if err != nil {
		return outcome{"60 concurrent wrong logins", false, err.Error()}
	}
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			res, err := c.PostForm(a.base+"/login", url.Values{"_csrf": {token}, "email": {"victim@example.com"}, "password": {"wrong-password"}})
			code := 0
			if err == nil {
				code = res.StatusCode
				res.Body.Close()
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return outcome{"60 concurrent wrong logins", codes[http.StatusUnauthorized] <= 10 && codes[http.StatusTooManyRequests] >= 50, fmt.Sprintf("status counts %v (limit: 10 per email)", codes)}
}

// forwardedForRotation tries 60 wrong passwords for 60 emails, each with a
// new X-Forwarded-For, which must not reset the per-address limit.
func (a *attacker) forwardedForRotation() outcome {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: timed, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token, err := a.csrfToken(c, "/login")
	if err != nil {
		return outcome{"X-Forwarded-For rotation", false, err.Error()}
	}
	limited := 0
	for i := range 60 {
		req, _ := http.NewRequest(http.MethodPost, a.base+"/login", strings.NewReader(url.Values{"_csrf": {token}, "email": {fmt.Sprintf("guess%d@example.com", i)}, "password": {"wrong"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1))
		r := do(c, req)
		if r.status == http.StatusTooManyRequests {
			limited++
		}
	}
	return outcome{"X-Forwarded-For rotation", limited > 0, fmt.Sprintf("60 wrong passwords from one socket, a new X-Forwarded-For each: %d refused with 429 (limit: 50 per address)", limited)}
}

// health polls /healthz until stopped.
type health struct {
	stopc  chan struct{}
	done   chan struct{}
	checks int
	fails  int
}

func watchHealth(base string) *health {
	h := &health{stopc: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 2 * time.Second}
	go func() {
		defer close(h.done)
		for {
			select {
			case <-h.stopc:
				return
			case <-time.After(250 * time.Millisecond):
			}
			res, err := client.Get(base + "/healthz")
			h.checks++
			if err != nil {
				h.fails++
				continue
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				h.fails++
			}
		}
	}()
	return h
}

func (h *health) stop() (checks, fails int) {
	close(h.stopc)
	<-h.done
	return h.checks, h.fails
}

func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown: " + err.Error()
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// timing is a transport that remembers the longest request it carried,
// from sending it to the end of its answer's body.
type timing struct {
	mu   sync.Mutex
	max  time.Duration
	what string
}

// timed carries every request of the attacks but the raw slow-upload
// sockets.
var timed = &timing{}

func (t *timing) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	res, err := http.DefaultTransport.RoundTrip(req)
	what := req.Method + " " + req.URL.Path
	if err != nil {
		t.note(time.Since(start), what)
		return nil, err
	}
	res.Body = &timedBody{ReadCloser: res.Body, done: func() { t.note(time.Since(start), what) }}
	return res, nil
}

func (t *timing) note(d time.Duration, what string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d > t.max {
		t.max, t.what = d, what
	}
}

func (t *timing) longest() (time.Duration, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.max, t.what
}

type timedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *timedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}
