package billing_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/billing/stripetest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

var testPrices = billing.Prices{
	TeamMonthly: "price_team_monthly", TeamYearly: "price_team_yearly",
	BusinessMonthly: "price_business_monthly", BusinessYearly: "price_business_yearly",
}

func newService(t *testing.T) (*billing.Service, *store.Store, *stripetest.Mock) {
	t.Helper()
	st := storetest.New(t)
	mock := stripetest.Start(t)
	svc := billing.New(billing.Config{
		SecretKey: "sk_test_123", WebhookSecret: "whsec_test", Prices: testPrices,
		BaseURL: "https://burnrate.test", APIURL: mock.URL,
	}, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return svc, st, mock
}

// TestCheckoutAndPortalSessions creates Checkout and Portal sessions on
// stripe-mock and checks what was asked of Stripe: subscription mode, the
// configured price, the org's one customer, the org's id in
// client_reference_id and metadata, and the URLs back.
func TestCheckoutAndPortalSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, mock := newService(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme"})
	orgID := strconv.FormatInt(org.ID, 10)

	u, err := svc.Checkout(ctx, st, org, owner.Email, "team", billing.Yearly)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, "https://checkout.stripe.com/") {
		t.Fatalf("checkout URL = %q, want stripe-mock's Checkout URL", u)
	}
	b, err := st.OrgBilling(ctx, org.ID)
	if err != nil || !strings.HasPrefix(b.CustomerID, "cus_") {
		t.Fatalf("stored customer = %q, %v", b.CustomerID, err)
	}
	sessions := mock.Requests("POST", "/v1/checkout/sessions")
	if len(sessions) != 1 {
		t.Fatalf("checkout sessions created: %d", len(sessions))
	}
	want := url.Values{
		"mode":                                {"subscription"},
		"customer":                            {b.CustomerID},
		"client_reference_id":                 {orgID},
		"line_items[0][price]":                {"price_team_yearly"},
		"line_items[0][quantity]":             {"1"},
		"metadata[org_id]":                    {orgID},
		"subscription_data[metadata][org_id]": {orgID},
		"success_url":                         {"https://burnrate.test/settings/billing/success?session_id={CHECKOUT_SESSION_ID}"},
		"cancel_url":                          {"https://burnrate.test/settings/billing/cancel"},
	}
	for k, v := range want {
		if got := sessions[0].Form.Get(k); got != v[0] {
			t.Errorf("checkout %s = %q, want %q", k, got, v[0])
		}
	}

	// A second checkout, a monthly Business one, and the portal: the same
	// customer, never a second one.
	if _, err := svc.Checkout(ctx, st, org, owner.Email, "business", billing.Monthly); err != nil {
		t.Fatal(err)
	}
	pu, err := svc.Portal(ctx, st, org, owner.Email)
	if err != nil || pu == "" {
		t.Fatalf("portal: %q, %v", pu, err)
	}
	portal := mock.Requests("POST", "/v1/billing_portal/sessions")
	if len(portal) != 1 || portal[0].Form.Get("customer") != b.CustomerID || portal[0].Form.Get("return_url") != "https://burnrate.test/settings/billing" {
		t.Fatalf("portal requests = %+v", portal)
	}
	if got := mock.Requests("POST", "/v1/checkout/sessions")[1].Form.Get("line_items[0][price]"); got != "price_business_monthly" {
		t.Fatalf("business monthly price = %q", got)
	}
	customers := mock.Requests("POST", "/v1/customers")
	if len(customers) != 1 {
		t.Fatalf("customers created: %d, want 1", len(customers))
	}
	c := customers[0]
	if c.Form.Get("metadata[org_id]") != orgID || c.Form.Get("email") != owner.Email || c.IdempotencyKey != "burnrate-customer-org-"+orgID {
		t.Fatalf("customer request = %+v", c)
	}

	// An unknown plan or interval never reaches Stripe.
	if _, err := svc.Checkout(ctx, st, org, owner.Email, "gold", billing.Monthly); err == nil {
		t.Fatal("checkout for an unknown plan succeeded")
	}
	if n := len(mock.Requests("POST", "/v1/checkout/sessions")); n != 2 {
		t.Fatalf("checkout sessions = %d after a refused plan", n)
	}
}

// TestCustomerCreatedOncePerOrg asks for an org's customer from several
// requests at once: one customer is created and stored.
func TestCustomerCreatedOncePerOrg(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, mock := newService(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	other, otherOwner := storetest.Org(t, st, storetest.OrgOpts{})
	ids := make([]string, 6)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if ids[i], err = svc.Customer(ctx, st, org, owner.Email); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("customers = %v, want one", ids)
		}
	}
	if n := len(mock.Requests("POST", "/v1/customers")); n != 1 {
		t.Fatalf("customers created = %d, want 1", n)
	}
	// Another org gets its own.
	if _, err := svc.Customer(ctx, st, other, otherOwner.Email); err != nil {
		t.Fatal(err)
	}
	if n := len(mock.Requests("POST", "/v1/customers")); n != 2 {
		t.Fatalf("customers created = %d, want 2", n)
	}
}

// TestBillingOff: with no secret key, nothing talks to Stripe and every
// org is unlimited.
func TestBillingOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	svc := billing.New(billing.Config{}, st, nil)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	if _, err := svc.Checkout(ctx, st, org, owner.Email, "team", billing.Monthly); err != billing.ErrOff {
		t.Fatalf("checkout with billing off: %v", err)
	}
	if p := svc.PlanOf(org); p != billing.Unlimited {
		t.Fatalf("plan = %+v", p)
	}
	var nilSvc *billing.Service
	if nilSvc.Enabled() || nilSvc.Cfg().PlanOf(org) != billing.Unlimited {
		t.Fatal("a nil service is not off")
	}
	q, err := nilSvc.RowQuota(ctx, st, org)
	if err != nil || q.Left >= 0 {
		t.Fatalf("quota with billing off = %+v, %v", q, err)
	}
}
