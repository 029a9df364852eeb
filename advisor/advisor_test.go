package advisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var now = time.Date(2026, time.December, 16, 14, 30, 0, 0, time.UTC)

// lora is a LoRA fine-tune of Llama 3.1 8B on 100M tokens, every option
// kept.
func lora(source string) advisor.AdviseBody {
	return advisor.AdviseBody{Job: "lora", Model: "llama-3.1-8b", Tokens: 1e8, PriceSource: source, MaxOptions: -1}
}

// The options come cheapest job first, then cheapest hour; the summary
// names the first and its cost, the one the page and the API put on top;
// every excluded configuration says why.
func TestAdviseOptionsCheapestFirstAndTheSummaryNamesTheWinner(t *testing.T) {
	adv, p, err := advisor.Advise(context.Background(), nil, 0, lora(advisor.PriceCatalog), now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Source != advisor.PriceCatalog || len(adv.Options) < 3 {
		t.Fatalf("source %s, %d options", p.Source, len(adv.Options))
	}
	for i := 1; i < len(adv.Options); i++ {
		a, b := adv.Options[i-1], adv.Options[i]
		if a.CostUSD.GreaterThan(b.CostUSD) || (a.CostUSD.Equal(b.CostUSD) && a.USDPerHour.GreaterThan(b.USDPerHour)) {
			t.Fatalf("option %d (%s %s, %s, %s/h) before option %d (%s %s, %s, %s/h)", i-1, a.Provider, a.InstanceType, a.CostUSD, a.USDPerHour,
				i, b.Provider, b.InstanceType, b.CostUSD, b.USDPerHour)
		}
	}
	w := adv.Options[0]
	if want := w.Provider + " " + w.InstanceType + " (" + w.Config() + ", " + w.Pricing + ") is cheapest at " +
		quantity.FormatMoney(w.CostUSD, "USD") + " for the job"; !strings.HasPrefix(adv.Summary, want) {
		t.Errorf("summary %q, want it to begin %q", adv.Summary, want)
	}
	if len(adv.Excluded) == 0 {
		t.Fatal("nothing excluded: the catalog holds GPUs too small for nothing?")
	}
	for _, e := range adv.Excluded {
		if strings.TrimSpace(e.Reason) == "" {
			t.Errorf("%s %s excluded without a reason", e.Provider, e.InstanceType)
		}
	}
	// MaxOptions keeps the first ones, in the same order.
	b := lora(advisor.PriceCatalog)
	b.MaxOptions = 2
	top, _, err := advisor.Advise(context.Background(), nil, 0, b, now)
	if err != nil || len(top.Options) != 2 || top.TotalOptions != len(adv.Options) ||
		top.Options[0].InstanceType != w.InstanceType || top.Options[1].InstanceType != adv.Options[1].InstanceType {
		t.Errorf("top 2: %d options of %d, %v", len(top.Options), top.TotalOptions, err)
	}
}

// An org's negotiated price for an instance is the price the advisor
// ranks and explains it at: priced far below the catalog, the option that
// was not first becomes the winner, its price source says so, and the
// summary names it. The catalog source ignores the override.
func TestAdviseRanksAtTheOrgsNegotiatedPrices(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	ctx := context.Background()
	base, _, err := advisor.Advise(ctx, st, org.ID, lora(advisor.PriceCatalog), now)
	if err != nil {
		t.Fatal(err)
	}
	var second pricing.Option
	for _, o := range base.Options[1:] {
		if o.Pricing == "on-demand" && o.InstanceType != base.Options[0].InstanceType {
			second = o
			break
		}
	}
	if second.InstanceType == "" {
		t.Fatal("no on-demand option after the first")
	}
	cheap := decimal.RequireFromString("0.01")
	if _, err := st.UpsertGPUPriceOverrides(ctx, org.ID, owner.ID, []store.GPUPriceOverrideInput{{
		Provider: second.Provider, InstanceType: second.InstanceType, OnDemand: &cheap, Note: "negotiated",
	}}); err != nil {
		t.Fatal(err)
	}
	adv, p, err := advisor.Advise(ctx, st, org.ID, lora(advisor.PriceOverrides), now)
	if err != nil {
		t.Fatal(err)
	}
	w := adv.Options[0]
	if p.GPUOverrides != 1 || w.Provider != second.Provider || w.InstanceType != second.InstanceType || !w.HourlyUSD.Equal(cheap) {
		t.Fatalf("winner %s %s at %s/h (%d overrides), want %s %s at %s/h", w.Provider, w.InstanceType, w.HourlyUSD, p.GPUOverrides,
			second.Provider, second.InstanceType, cheap)
	}
	if !strings.Contains(w.PriceSource, "your negotiated prices") || !strings.HasPrefix(adv.Summary, w.Provider+" "+w.InstanceType+" ") {
		t.Errorf("price source %q, summary %q", w.PriceSource, adv.Summary)
	}
	again, _, err := advisor.Advise(ctx, st, org.ID, lora(advisor.PriceCatalog), now)
	if err != nil || again.Options[0].InstanceType != base.Options[0].InstanceType {
		t.Errorf("the catalog source took the override: %v", err)
	}
}

// Bad input is a 422 that names the field, whoever asks.
func TestAdviseBadInputNamesTheField(t *testing.T) {
	check := func(name string, err error, field string) {
		t.Helper()
		var ie *advisor.InputError
		if !errors.As(err, &ie) || ie.HTTPStatus() != 422 || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want a 422 naming %s", name, err, field)
		}
	}
	_, _, err := advisor.Advise(context.Background(), nil, 0, advisor.AdviseBody{Job: "batch-inference", Model: "llama-3.1-8b", PriceSource: advisor.PriceCatalog}, now)
	check("batch inference without tokens", err, "tokens")
	_, _, err = advisor.Advise(context.Background(), nil, 0, advisor.AdviseBody{Job: "lora", Model: "llama-3.1-8b", PriceSource: "cheapest"}, now)
	check("an unknown price source", err, "price_source")
	_, _, err = advisor.Advise(context.Background(), nil, 0, lora(advisor.PriceOverrides), now)
	check("overrides without an org", err, "needs an org")
	for body, field := range map[string]string{
		`{"job": "lora", "tokens": 1e308}`:  "tokens",
		`{"job": "lora", "seq_len": -4096}`: "seq_len",
		`{"job": "lora", "gpus": 8}`:        "gpus",
	} {
		var b advisor.AdviseBody
		err := json.Unmarshal([]byte(body), &b)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", body, err, field)
		}
	}
}
