package web_test

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// orgFixtures are ids of things that belong to one org, keyed by the route
// path prefix whose :id names them. Every route with a path parameter must
// find its fixture here, so a new tenant route cannot dodge the walk in
// TestCrossTenantRoutesAre404.
type orgFixtures map[string]string

func makeOrgFixtures(t *testing.T, b *bundle, org store.Org, owner store.User) orgFixtures {
	t.Helper()
	member := storetest.Member(t, b.st, org, access.Member)
	inv, _, err := b.st.CreateInvite(ctx(), org.ID, "someone@example.com", access.Member, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := b.st.CreateAPIToken(ctx(), org.ID, "fixture", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := b.st.CreateImport(ctx(), store.NewImport{OrgID: org.ID, FileName: "b.csv", SHA256: []byte("b"), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := b.st.UpsertGPUPriceOverrides(ctx(), org.ID, owner.ID, []store.GPUPriceOverrideInput{{
		Provider: "aws", InstanceType: "p5.48xlarge", OnDemand: ptr(decimal.RequireFromString("8")),
	}})
	if err != nil || gpu != 1 {
		t.Fatal(err)
	}
	gpus, err := b.st.GPUPriceOverrides(ctx(), org.ID)
	if err != nil {
		t.Fatal(err)
	}
	llm, err := b.st.UpsertLLMPriceOverride(ctx(), org.ID, owner.ID, store.LLMPriceOverrideInput{
		Model: "gpt-4.1-mini", Input: decimal.RequireFromString("0.1"), Output: decimal.RequireFromString("0.4"),
	})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := b.st.CreateScenario(ctx(), org.ID, owner.ID, store.ScenarioBreakEven, "B's plan", []byte(`{"model":"gpt-4.1-mini","input_tokens":1e6,"output_tokens":1e6}`))
	if err != nil {
		t.Fatal(err)
	}
	bud, err := b.st.CreateBudget(ctx(), org.ID, owner.ID, store.BudgetInput{Name: "B's budget", Amount: decimal.NewFromInt(100),
		Currency: "USD", Period: "monthly", Thresholds: []int{50, 80, 100}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := b.st.SetNotificationChannel(ctx(), org.ID, 0, store.ChannelSlack, "https://hooks.slack.com/services/B", "https://hooks.slack.com/…/es/B", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	dlv, _, err := b.st.RecordDelivery(ctx(), org.ID, store.NewDelivery{Kind: "test", Channel: store.ChannelSlack, ChannelID: ch.ID,
		Target: ch.URLMasked, Subject: "B's test", DedupeKey: "test:b", Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := b.st.CreateConnection(ctx(), store.NewConnection{OrgID: org.ID, Name: "B's OpenAI", Kind: "openai",
		Settings: []byte(`{}`), Secret: "v1.00000000.AAAA", SecretHint: "…BBBB"})
	if err != nil {
		t.Fatal(err)
	}
	return orgFixtures{
		"/connections/:id":                       itoa(conn.ID),
		"/settings/notifications/channels/:id":   itoa(ch.ID),
		"/settings/notifications/deliveries/:id": itoa(dlv.ID),
		"/budgets/:id":                           itoa(bud.ID),
		"/imports/:id":                           itoa(imp.ID),
		"/members/:user_id":                      itoa(member.ID),
		"/invites/:id":                           itoa(inv.ID),
		"/tokens/:id":                            itoa(tok.ID),
		"/prices/gpu/:id":                        itoa(gpus[0].ID),
		"/prices/llm/:id":                        itoa(llm.ID),
		"/breakeven/scenarios/:id":               itoa(sc.ID),
	}
}

// fill replaces a route's parameters with org B's ids; ok is false when the
// route has a parameter no fixture covers.
func (f orgFixtures) fill(path string) (string, bool) {
	if !strings.Contains(path, ":") {
		return path, true
	}
	for prefix, id := range f {
		if strings.HasPrefix(strings.TrimPrefix(path, "/api/v1"), prefix) {
			param := prefix[strings.LastIndex(prefix, "/")+1:]
			return strings.Replace(path, param, id, 1), true
		}
	}
	return path, false
}

// TestCrossTenantRoutesAre404 walks every route that takes an id, as a
// member (admin) of org A, against the ids of org B's things, and expects
// 404 every time: another org's things look like nothing at all.
func TestCrossTenantRoutesAre404(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orgA, ownerA := storetest.Org(t, b.st, storetest.OrgOpts{Name: "A"})
	orgB, ownerB := storetest.Org(t, b.st, storetest.OrgOpts{Name: "B"})
	fixturesB := makeOrgFixtures(t, b, orgB, ownerB)
	_, tokenA, err := b.st.CreateAPIToken(ctx(), orgA.ID, "a", ownerA.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(ownerA.Email)

	routes := b.srv.Routes()
	sort.Slice(routes, func(i, j int) bool { return routes[i].Path+routes[i].Method < routes[j].Path+routes[j].Method })
	walked := 0
	for _, r := range routes {
		if !strings.Contains(r.Path, ":") || strings.HasPrefix(r.Path, "/join/") || strings.HasPrefix(r.Path, "/password/reset/") || strings.HasPrefix(r.Path, "/signup/confirm/") || strings.HasPrefix(r.Path, "/static") {
			continue // no id, or a public secret-token link (not an id)
		}
		path, ok := fixturesB.fill(r.Path)
		if !ok {
			t.Errorf("%s %s: no org B fixture for its parameter; add one to makeOrgFixtures", r.Method, r.Path)
			continue
		}
		var rec interface{ Result() *http.Response }
		if strings.HasPrefix(path, "/api/") {
			req := newFormRequest(path, url.Values{})
			req.Method = r.Method
			req.Header.Set("Authorization", "Bearer "+tokenA)
			rec = c.do(req)
		} else if r.Method == http.MethodGet {
			rec = c.get(path)
		} else {
			c.get("/dashboard")
			req := newFormRequest(path, url.Values{"_csrf": {c.csrf}, "role": {"viewer"}, "name": {"x"}})
			req.Method = r.Method
			rec = c.do(req)
		}
		if got := rec.Result().StatusCode; got != http.StatusNotFound {
			t.Errorf("%s %s as org A: status %d, want 404", r.Method, path, got)
		}
		walked++
	}
	t.Logf("walked %d tenant routes with org B's ids", walked)
	if walked < 4 {
		t.Fatalf("walked only %d routes", walked)
	}
	// Org B's things are untouched.
	if ms, _ := b.st.Members(ctx(), orgB.ID); len(ms) != 2 {
		t.Fatalf("org B members = %d, want 2", len(ms))
	}
	if toks, _ := b.st.APITokens(ctx(), orgB.ID); toks[0].RevokedAt != nil {
		t.Fatal("org B's token was revoked from org A")
	}
	if gpus, _ := b.st.GPUPriceOverrides(ctx(), orgB.ID); len(gpus) != 1 || gpus[0].OnDemand.String() != "8" {
		t.Fatalf("org B's GPU prices changed from org A: %+v", gpus)
	}
	if llm, _ := b.st.LLMPriceOverrides(ctx(), orgB.ID); len(llm) != 1 || llm[0].Input.String() != "0.1" {
		t.Fatalf("org B's LLM prices changed from org A: %+v", llm)
	}
	if scs, _ := b.st.Scenarios(ctx(), orgB.ID, store.ScenarioBreakEven); len(scs) != 1 {
		t.Fatal("org B's scenario was deleted from org A")
	}
	if bs, _ := b.st.Budgets(ctx(), orgB.ID); len(bs) != 1 || bs[0].Name != "B's budget" {
		t.Fatalf("org B's budgets changed from org A: %+v", bs)
	}
	if chs, _ := b.st.NotificationChannels(ctx(), orgB.ID); len(chs) != 1 {
		t.Fatal("org B's notification channel was removed from org A")
	}
	if ds, _ := b.st.Deliveries(ctx(), orgB.ID, 10); len(ds) != 1 || ds[0].Status != store.DeliveryPending || ds[0].Attempts != 0 {
		t.Fatalf("org B's delivery was tried from org A: %+v", ds)
	}
}
