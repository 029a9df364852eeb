package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store/storetest"
)

var stripeEnv = map[string]string{
	"STRIPE_SECRET_KEY": "sk_test_123", "STRIPE_WEBHOOK_SECRET": "whsec_test",
	"STRIPE_PRICE_TEAM_MONTHLY": "price_tm", "STRIPE_PRICE_TEAM_YEARLY": "price_ty",
	"STRIPE_PRICE_BUSINESS_MONTHLY": "price_bm", "STRIPE_PRICE_BUSINESS_YEARLY": "price_by",
}

func TestConfigStripePrices(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(stripeEnv))
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.billing(); !b.Enabled() || b.Prices.TeamYearly != "price_ty" || b.Prices.BusinessMonthly != "price_bm" {
		t.Fatalf("billing config = %+v", b)
	}
	bad := map[string]string{}
	for k, v := range stripeEnv {
		bad[k] = v
	}
	delete(bad, "STRIPE_PRICE_TEAM_YEARLY")
	bad["STRIPE_PRICE_BUSINESS_MONTHLY"] = "prod_123"
	bad["STRIPE_PRICE_BUSINESS_YEARLY"] = "price_tm"
	_, err = loadConfig(env(bad))
	for _, want := range []string{"STRIPE_PRICE_TEAM_YEARLY: required", "STRIPE_PRICE_BUSINESS_MONTHLY: want a Stripe Price id", "STRIPE_PRICE_BUSINESS_YEARLY: the same price as STRIPE_PRICE_TEAM_MONTHLY"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config error lacks %q: %v", want, err)
		}
	}
	if _, err := loadConfig(env(map[string]string{"STRIPE_PRICE_TEAM_MONTHLY": "price_tm"})); err == nil || !strings.Contains(err.Error(), "billing is off") {
		t.Errorf("a price without billing: %v", err)
	}
}

// TestOrgPlanCommand: 'burnrate org plan' shows and sets an org's plan; with
// billing on, 'burnrate import' is held to the plan's monthly rows like an
// upload, and with billing off nothing is.
func TestOrgPlanCommand(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	off := map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}
	on := map[string]string{}
	for k, v := range stripeEnv {
		on[k] = v
	}
	for k, v := range off {
		on[k] = v
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"org", "create", "--name", "Planned", "--owner-email", "plan@example.com"}, env(off), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(ctx, []string{"org", "plan", "--org", "planned"}, env(off), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "plan:    free (active)") || !strings.Contains(out.String(), "billing: off") {
		t.Fatalf("org plan printed %q", out.String())
	}

	// A file over Free's 10,000 rows a month.
	dir := t.TempDir()
	file := filepath.Join(dir, "big.csv")
	var sb strings.Builder
	sb.WriteString("BilledCost,ChargePeriodStart,ServiceName,BillingCurrency\n")
	day := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	for i := range 10_001 {
		fmt.Fprintf(&sb, "1.5,%s,Compute %d,USD\n", day, i%5)
	}
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(ctx, []string{"import", "--org", "planned", file}, env(on), &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "The Free plan imports up to 10,000 charge rows a month") || !strings.Contains(out.String(), "/settings/billing") {
		t.Fatalf("over-quota import with billing on: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"org", "plan", "--org", "planned", "--json"}, env(on), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["rows_this_month"] != float64(0) || got["limits_applied"] != "free" {
		t.Fatalf("org plan --json = %s (%v)", out.String(), err)
	}

	if err := run(ctx, []string{"org", "plan", "--org", "planned", "--set", "gold"}, env(on), &out, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "free, team, business") {
		t.Fatalf("--set gold: %v", err)
	}
	out.Reset()
	if err := run(ctx, []string{"org", "plan", "--org", "planned", "--set", "team"}, env(on), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "plan:    team (active)") || !strings.Contains(out.String(), "limit: 1000000") {
		t.Fatalf("org plan --set team printed %q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"import", "--org", "planned", file}, env(on), &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("import on Team: %v\n%s", err, out.String())
	}
	if err := run(ctx, []string{"org", "plan", "--org", "nobody"}, env(off), &out, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `no org with slug "nobody"`) {
		t.Fatalf("unknown org: %v", err)
	}
}
