package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestFormsRefuseTextPostgresCannotStore sends form fields, query
// parameters, file names and stored headers with a NUL or bytes that are not
// UTF-8: each is a 422 naming the field, not a 500 from Postgres refusing
// the text.
func TestFormsRefuseTextPostgresCannotStore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/tokens")

	refused := func(rec *httptest.ResponseRecorder, want string) {
		t.Helper()
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("body lacks %q:\n%s", want, rec.Body)
		}
	}
	refused(c.post("/tokens", url.Values{"name": {"ci \xff"}}), "name: not valid UTF-8")
	refused(c.post("/tokens", url.Values{"name": {"ci\x00"}}), "name: contains a NUL byte")
	if toks, err := b.st.APITokens(ctx(), org.ID); err != nil || len(toks) != 0 {
		t.Fatalf("tokens after refused forms: %v, %v", toks, err)
	}
	c.get("/imports/mapping")
	refused(c.post("/imports/mapping", url.Values{"date": {"Day"}, "cost": {"Amo\xfcnt"}}), "cost: not valid UTF-8")
	c.get("/settings")
	refused(c.post("/settings", url.Values{"name": {"Acme\x00"}, "time_zone": {"UTC"}, "currency": {"USD"}}), "name: contains a NUL byte")
	c.get("/budgets/new")
	refused(c.post("/budgets", url.Values{"name": {"GPU\xe9"}, "amount": {"10"}}), "name: not valid UTF-8")

	// Query parameters, for any route.
	refused(c.get("/imports/progress?key=%FF"), "key: not valid UTF-8")

	// The browser upload's file name.
	c.get("/imports")
	body, ctype := multipartUpload(t, map[string]string{"_csrf": c.csrf}, map[string][]byte{"caf\xe9.csv": []byte("BilledCost,ChargePeriodStart,BillingCurrency\n1,2024-01-01,USD\n")})
	req := httptest.NewRequest(http.MethodPost, "/imports", body)
	req.Header.Set("Content-Type", ctype)
	refused(c.do(req), "filename: not valid UTF-8")

	// A price list's cells are stored too.
	c.get("/prices")
	rec := c.postFile("/prices/gpu/upload", "file", "prices.csv", []byte("provider,instance_type,price_on_demand_usd_hr\naws,p5.48xlarge,8\naws,caf\xe9,1\n"), nil)
	refused(rec, "line 3, column instance_type")
	if os, err := b.st.GPUPriceOverrides(ctx(), org.ID); err != nil || len(os) != 0 {
		t.Fatalf("price overrides after a refused list: %v, %v", os, err)
	}

	// Signing up: the org name, and the User-Agent the session keeps.
	anon := b.client(t)
	anon.get("/signup")
	form := url.Values{"name": {"Ann"}, "email": {"ann@example.com"}, "password": {"correct horse battery"}, "org_name": {"Ann\x00Co"}}
	refused(anon.post("/signup", form), "org_name: contains a NUL byte")
	form.Set("org_name", "Ann Co")
	form.Set("_csrf", anon.csrf)
	req = httptest.NewRequest(http.MethodPost, "/signup", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "curl/8 \xff")
	refused(anon.do(req), "header User-Agent: not valid UTF-8")
	if _, err := b.st.UserByEmail(ctx(), "ann@example.com"); err == nil {
		t.Error("a refused sign-up made a user")
	}
}

// TestJSONBodiesRefuseTextPostgresCannotStore sends API bodies with strings
// Postgres cannot store: a 422 names where in the document the string is.
func TestJSONBodiesRefuseTextPostgresCannotStore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	post := func(path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, path, token, body))
		return rec
	}
	for body, want := range map[string]string{
		`{"name":"GPUs\u0000","amount":1}`:                                  `"error":"name: contains a NUL character (\\u0000)"`,
		"{\"name\":\"GPUs \xe9\",\"amount\":1}":                             `"error":"name: not valid UTF-8"`,
		`{"name":"x","amount":1,"scope":{"tags":{"env":"a\u0000"}}}`:        `"error":"scope.tags.env: contains a NUL character (\\u0000)"`,
		`{"name":"x","amount":1,"scope":{"tags":{"e\u0000v":"prod"}}}`:      `"error":"scope.tags.\"e\\x00v\": the name contains a NUL character (\\u0000)"`,
		"{\"name\":\"x\",\"amount\":1,\"recipients\":[\"a@b.c\",\"\xff\"]}": `"error":"recipients[1]: not valid UTF-8"`,
	} {
		rec := post("/api/v1/budgets", body)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("POST %q: %d %s, want 422 with %s", body, rec.Code, rec.Body, want)
		}
	}
	if bs, err := b.st.Budgets(ctx(), org.ID); err != nil || len(bs) != 0 {
		t.Fatalf("budgets after refused bodies: %v, %v", bs, err)
	}
	// The advisor's body goes through the same reader.
	rec := post("/api/v1/advise", `{"job":"lora","model":"llama\u0000"}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "model: contains a NUL character") {
		t.Errorf("advise: %d %s", rec.Code, rec.Body)
	}
	// Escapes of other characters, and a literal backslash-u, are fine.
	rec = post("/api/v1/budgets", `{"name":"r\u00e9seau \\u0000","amount":1}`)
	wantStatus(t, rec, http.StatusCreated)
	if !strings.Contains(rec.Body.String(), `"name":"réseau \\u0000"`) {
		t.Errorf("budget = %s", rec.Body)
	}
}
