package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/billing/stripetest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

const whsec = "whsec_test_secret"

var testPrices = billing.Prices{
	TeamMonthly: "price_team_monthly", TeamYearly: "price_team_yearly",
	BusinessMonthly: "price_business_monthly", BusinessYearly: "price_business_yearly",
}

// lockedBuffer is a log destination requests write to concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// billingBundle is a server with billing on: Stripe is stripe-mock when
// the test needs the API (withMock), else an address nothing answers
// (webhooks never call Stripe).
type billingBundle struct {
	*bundle
	svc  *billing.Service
	mock *stripetest.Mock
	logs *lockedBuffer
}

func setupBilling(t *testing.T, withMock bool, baseURL string) *billingBundle {
	t.Helper()
	st := storetest.New(t)
	apiURL := "http://127.0.0.1:1"
	var mock *stripetest.Mock
	if withMock {
		mock = stripetest.Start(t)
		apiURL = mock.URL
	}
	if baseURL == "" {
		baseURL = "http://burnrate.test"
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	a, err := app.New(st, app.Config{BaseURL: baseURL, Billing: billing.Config{
		SecretKey: "sk_test_123", WebhookSecret: whsec, Prices: testPrices, BaseURL: baseURL, APIURL: apiURL,
	}}, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := web.NewServer(log, a, web.Config{Now: testClock})
	return &billingBundle{bundle: &bundle{st: st, srv: srv}, svc: a.Billing, mock: mock, logs: logs}
}

// stripeEvent is an event as Stripe sends it, at API version 2023-10-16.
func stripeEvent(id, typ string, created time.Time, obj map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": "2023-10-16", "created": created.Unix(),
		"livemode": false, "data": map[string]any{"object": obj},
	})
	return b
}

func subscriptionObj(id, customer, status, price string) map[string]any {
	return map[string]any{
		"id": id, "object": "subscription", "customer": customer, "status": status,
		"current_period_end": time.Date(2030, 1, 15, 0, 0, 0, 0, time.UTC).Unix(),
		"metadata":           map[string]string{},
		"items": map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "si_" + id, "object": "subscription_item", "price": map[string]any{"id": price, "object": "price"}},
		}},
	}
}

func invoiceObj(id, customer, subscription string) map[string]any {
	return map[string]any{"id": id, "object": "invoice", "customer": customer, "subscription": subscription}
}

// deliver posts payload to the webhook as Stripe would, signed with secret.
func (b *billingBundle) deliver(payload []byte, secret string) *httptest.ResponseRecorder {
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret})
	req := httptest.NewRequest(http.MethodPost, "/billing/webhook", bytes.NewReader(signed.Payload))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", signed.Header)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	return rec
}

func (b *billingBundle) mustDeliver(t *testing.T, payload []byte) {
	t.Helper()
	if rec := b.deliver(payload, whsec); rec.Code != http.StatusOK {
		t.Fatalf("webhook: %d %s", rec.Code, rec.Body)
	}
}

func (b *billingBundle) orgBilling(t *testing.T, orgID int64) store.OrgBilling {
	t.Helper()
	ob, err := b.st.OrgBilling(context.Background(), orgID)
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

// customerOrg is an org whose Stripe customer is known (as Checkout leaves it).
func (b *billingBundle) customerOrg(t *testing.T) (store.Org, store.User, string) {
	t.Helper()
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	cus := fmt.Sprintf("cus_test_%d", org.ID)
	if err := b.st.SetStripeCustomer(context.Background(), org.ID, cus); err != nil {
		t.Fatal(err)
	}
	return org, owner, cus
}

func eventCount(t *testing.T, st *store.Store) int64 {
	t.Helper()
	n, err := st.StripeEventCount(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStripeWebhook(t *testing.T) {
	t.Parallel()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)

	t.Run("ValidSubscriptionSetsThePlan", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		b.mustDeliver(t, stripeEvent("evt_created", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_team_yearly")))
		ob := b.orgBilling(t, org.ID)
		if ob.Plan != "team" || ob.PlanStatus != "active" || ob.SubscriptionID != "sub_1" || ob.RenewsAt == nil || ob.RenewsAt.Year() != 2030 {
			t.Fatalf("after subscription.created: %+v", ob)
		}
		if n := eventCount(t, b.st); n != 1 {
			t.Fatalf("events stored = %d", n)
		}
	})

	t.Run("CheckoutCompletedFindsTheOrgByClientReference", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
		b.mustDeliver(t, stripeEvent("evt_cs", "checkout.session.completed", t0, map[string]any{
			"id": "cs_1", "object": "checkout.session", "mode": "subscription", "customer": "cus_new",
			"subscription": "sub_9", "client_reference_id": fmt.Sprint(org.ID), "metadata": map[string]string{"org_id": fmt.Sprint(org.ID)},
		}))
		ob := b.orgBilling(t, org.ID)
		if ob.CustomerID != "cus_new" || ob.SubscriptionID != "sub_9" || ob.Plan != "free" {
			t.Fatalf("after checkout.session.completed: %+v", ob)
		}
		// Then the subscription's own event, found by the customer.
		b.mustDeliver(t, stripeEvent("evt_sub9", "customer.subscription.created", t0.Add(time.Second), subscriptionObj("sub_9", "cus_new", "active", "price_business_monthly")))
		if ob := b.orgBilling(t, org.ID); ob.Plan != "business" {
			t.Fatalf("after subscription.created: %+v", ob)
		}
	})

	t.Run("BadSignatureIs400AndLogged", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		payload := stripeEvent("evt_forged", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_business_yearly"))
		if rec := b.deliver(payload, "whsec_someone_else"); rec.Code != http.StatusBadRequest {
			t.Fatalf("forged: %d %s", rec.Code, rec.Body)
		}
		// No signature at all, and a good signature on a changed body.
		req := httptest.NewRequest(http.MethodPost, "/billing/webhook", bytes.NewReader(payload))
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("unsigned: %d", rec.Code)
		}
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: whsec})
		tampered := bytes.Replace(signed.Payload, []byte("price_business_yearly"), []byte("price_team_monthly"), 1)
		req = httptest.NewRequest(http.MethodPost, "/billing/webhook", bytes.NewReader(tampered))
		req.Header.Set("Stripe-Signature", signed.Header)
		rec = httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("tampered: %d", rec.Code)
		}
		// A signature older than Stripe's tolerance is a replay.
		old := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: whsec, Timestamp: time.Now().Add(-time.Hour)})
		req = httptest.NewRequest(http.MethodPost, "/billing/webhook", bytes.NewReader(old.Payload))
		req.Header.Set("Stripe-Signature", old.Header)
		rec = httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("stale signature: %d", rec.Code)
		}
		if n := eventCount(t, b.st); n != 0 {
			t.Fatalf("events stored = %d", n)
		}
		if ob := b.orgBilling(t, org.ID); ob.Plan != "free" {
			t.Fatalf("plan = %q after forged events", ob.Plan)
		}
		if got := strings.Count(b.logs.String(), "stripe webhook refused: the signature does not verify"); got != 4 {
			t.Fatalf("log lines for refused webhooks = %d, want 4:\n%s", got, b.logs)
		}
	})

	t.Run("OtherAPIVersionIsVerifiedAndAccepted", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		payload := bytes.Replace(stripeEvent("evt_v", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_team_monthly")),
			[]byte(`"2023-10-16"`), []byte(`"2024-06-20"`), 1)
		if rec := b.deliver(payload, "whsec_wrong"); rec.Code != http.StatusBadRequest {
			t.Fatalf("another version, forged: %d", rec.Code)
		}
		b.mustDeliver(t, payload)
		if ob := b.orgBilling(t, org.ID); ob.Plan != "team" {
			t.Fatalf("plan = %q", ob.Plan)
		}
		if !strings.Contains(b.logs.String(), "api_version=2024-06-20") {
			t.Fatalf("the other version is not logged:\n%s", b.logs)
		}
	})

	t.Run("ReplayHasNoSecondEffect", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		payload := stripeEvent("evt_once", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_team_monthly"))
		b.mustDeliver(t, payload)
		// An operator moves the org; the same event, delivered again, must
		// not move it back.
		if err := b.st.SetOrgPlan(context.Background(), org.ID, "business"); err != nil {
			t.Fatal(err)
		}
		rec := b.deliver(payload, whsec)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"duplicate":true`) {
			t.Fatalf("replay: %d %s", rec.Code, rec.Body)
		}
		if ob := b.orgBilling(t, org.ID); ob.Plan != "business" {
			t.Fatalf("plan = %q after a replay", ob.Plan)
		}
		if n := eventCount(t, b.st); n != 1 {
			t.Fatalf("events stored = %d", n)
		}
	})

	t.Run("UpdatedAfterDeletedKeepsItDeleted", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		b.mustDeliver(t, stripeEvent("evt_c", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_team_monthly")))
		b.mustDeliver(t, stripeEvent("evt_d", "customer.subscription.deleted", t0.Add(20*time.Second), subscriptionObj("sub_1", cus, "canceled", "price_team_monthly")))
		// Sent before the deletion, delivered after it.
		b.mustDeliver(t, stripeEvent("evt_u", "customer.subscription.updated", t0.Add(10*time.Second), subscriptionObj("sub_1", cus, "active", "price_business_monthly")))
		// Stamped in the same second as the deletion.
		b.mustDeliver(t, stripeEvent("evt_u2", "customer.subscription.updated", t0.Add(20*time.Second), subscriptionObj("sub_1", cus, "active", "price_business_monthly")))
		ob := b.orgBilling(t, org.ID)
		if ob.Plan != "free" || ob.PlanStatus != "canceled" {
			t.Fatalf("after updated-after-deleted: %+v", ob)
		}
		// A new subscription later is taken.
		b.mustDeliver(t, stripeEvent("evt_new", "customer.subscription.created", t0.Add(time.Minute), subscriptionObj("sub_2", cus, "active", "price_team_yearly")))
		if ob := b.orgBilling(t, org.ID); ob.Plan != "team" || ob.SubscriptionID != "sub_2" {
			t.Fatalf("after a new subscription: %+v", ob)
		}
		// And the old one's late news does not touch it.
		b.mustDeliver(t, stripeEvent("evt_old", "customer.subscription.deleted", t0.Add(2*time.Minute), subscriptionObj("sub_1", cus, "canceled", "price_team_monthly")))
		if ob := b.orgBilling(t, org.ID); ob.Plan != "team" {
			t.Fatalf("an old subscription's deletion moved the org: %+v", ob)
		}
	})

	t.Run("PaymentFailedThenPaid", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, owner, cus := b.customerOrg(t)
		member := storetest.Member(t, b.st, org, access.Member)
		b.mustDeliver(t, stripeEvent("evt_c", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_team_monthly")))
		b.mustDeliver(t, stripeEvent("evt_f", "invoice.payment_failed", t0.Add(time.Minute), invoiceObj("in_1", cus, "sub_1")))
		ob := b.orgBilling(t, org.ID)
		if ob.Plan != "team" || ob.PlanStatus != "past_due" || ob.GraceUntil == nil ||
			time.Until(*ob.GraceUntil) < 6*24*time.Hour || time.Until(*ob.GraceUntil) > 7*24*time.Hour {
			t.Fatalf("after payment_failed: %+v", ob)
		}
		oc := b.client(t)
		oc.login(owner.Email)
		if d := doc(t, oc.get("/settings")); d.Find("[data-testid=billing-banner]").Length() != 1 {
			t.Fatal("the owner sees no banner while the payment is failing")
		}
		mc := b.client(t)
		mc.login(member.Email)
		if d := doc(t, mc.get("/settings")); d.Find("[data-testid=billing-banner]").Length() != 0 {
			t.Fatal("a member sees the billing banner")
		}
		b.mustDeliver(t, stripeEvent("evt_p", "invoice.paid", t0.Add(2*time.Minute), invoiceObj("in_1", cus, "sub_1")))
		if ob := b.orgBilling(t, org.ID); ob.PlanStatus != "active" || ob.GraceUntil != nil || ob.Plan != "team" {
			t.Fatalf("after invoice.paid: %+v", ob)
		}
		if d := doc(t, oc.get("/settings")); d.Find("[data-testid=billing-banner]").Length() != 0 {
			t.Fatal("the banner stays after the invoice was paid")
		}
		// A failure stamped before the payment, delivered after it, changes nothing.
		b.mustDeliver(t, stripeEvent("evt_f_late", "invoice.payment_failed", t0.Add(90*time.Second), invoiceObj("in_1", cus, "sub_1")))
		if ob := b.orgBilling(t, org.ID); ob.PlanStatus != "active" {
			t.Fatalf("a late failure reopened the grace period: %+v", ob)
		}

		// Fails again and is not paid in time: the periodic job drops it
		// to Free; paying later brings the plan back.
		b.mustDeliver(t, stripeEvent("evt_f2", "invoice.payment_failed", t0.Add(3*time.Minute), invoiceObj("in_2", cus, "sub_1")))
		if ids, err := b.svc.EndGrace(context.Background()); err != nil || len(ids) != 0 {
			t.Fatalf("grace ended early: %v %v", ids, err)
		}
		b.svc.Now = func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }
		ids, err := b.svc.EndGrace(context.Background())
		if err != nil || len(ids) != 1 || ids[0] != org.ID {
			t.Fatalf("EndGrace = %v, %v", ids, err)
		}
		if ob := b.orgBilling(t, org.ID); ob.Plan != "free" || ob.PlanStatus != "unpaid" || ob.StripePlan != "team" {
			t.Fatalf("after the grace period: %+v", ob)
		}
		if d := doc(t, oc.get("/settings")); d.Find("[data-testid=billing-banner]").Length() != 1 {
			t.Fatal("no banner once on Free for want of payment")
		}
		b.mustDeliver(t, stripeEvent("evt_p2", "invoice.paid", t0.Add(4*time.Minute), invoiceObj("in_2", cus, "sub_1")))
		if ob := b.orgBilling(t, org.ID); ob.Plan != "team" || ob.PlanStatus != "active" {
			t.Fatalf("paying after the grace period: %+v", ob)
		}
	})

	t.Run("FirstPaymentFailingStartsNoGrace", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		b.mustDeliver(t, stripeEvent("evt_c", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "incomplete", "price_team_monthly")))
		b.mustDeliver(t, stripeEvent("evt_f", "invoice.payment_failed", t0.Add(time.Second), invoiceObj("in_1", cus, "sub_1")))
		if ob := b.orgBilling(t, org.ID); ob.Plan != "free" || ob.PlanStatus != "active" || ob.GraceUntil != nil {
			t.Fatalf("after a first payment failed: %+v", ob)
		}
		b.mustDeliver(t, stripeEvent("evt_x", "customer.subscription.updated", t0.Add(2*time.Second), subscriptionObj("sub_1", cus, "incomplete_expired", "price_team_monthly")))
		if ob := b.orgBilling(t, org.ID); ob.Plan != "free" || ob.PlanStatus != "canceled" {
			t.Fatalf("after incomplete_expired: %+v", ob)
		}
	})

	t.Run("ConcurrentDeliveriesApplyOnce", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		org, _, cus := b.customerOrg(t)
		payload := stripeEvent("evt_twice", "customer.subscription.created", t0, subscriptionObj("sub_1", cus, "active", "price_team_monthly"))
		const n = 4
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				recs[i] = b.deliver(payload, whsec)
			}()
		}
		close(start)
		wg.Wait()
		fresh := 0
		for _, rec := range recs {
			if rec.Code != http.StatusOK {
				t.Fatalf("concurrent delivery: %d %s", rec.Code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), `"duplicate":false`) {
				fresh++
			}
		}
		if fresh != 1 || eventCount(t, b.st) != 1 {
			t.Fatalf("applied %d times, %d events stored; want once", fresh, eventCount(t, b.st))
		}
		if ob := b.orgBilling(t, org.ID); ob.Plan != "team" {
			t.Fatalf("plan = %q", ob.Plan)
		}
	})

	t.Run("OnlyThisRouteSkipsCSRFAndItHasABodyLimit", func(t *testing.T) {
		t.Parallel()
		b := setupBilling(t, false, "")
		_, owner, _ := b.customerOrg(t)
		c := b.client(t)
		c.login(owner.Email)
		// A logged-in browser's form without its token is still refused.
		rec := c.post("/settings/billing/portal", url.Values{"_csrf": {"wrong"}})
		if rec.Code != http.StatusForbidden {
			t.Fatalf("portal without a CSRF token: %d", rec.Code)
		}
		// The webhook route takes only POST.
		get := httptest.NewRecorder()
		b.srv.ServeHTTP(get, httptest.NewRequest(http.MethodGet, "/billing/webhook", nil))
		if get.Code != http.StatusMethodNotAllowed && get.Code != http.StatusNotFound {
			t.Fatalf("GET /billing/webhook: %d", get.Code)
		}
		big := stripeEvent("evt_big", "customer.updated", t0, map[string]any{"id": "cus_1", "object": "customer", "description": strings.Repeat("x", billing.MaxWebhookBytes)})
		if rec := b.deliver(big, whsec); rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("oversized event: %d", rec.Code)
		}
		if n := eventCount(t, b.st); n != 0 {
			t.Fatalf("events stored = %d", n)
		}
	})
}

// overQuotaCSV is a FOCUS file of rows charge rows, within the last days.
func overQuotaCSV(rows int) []byte {
	var sb strings.Builder
	sb.WriteString("BilledCost,ChargePeriodStart,ServiceName,BillingCurrency\n")
	day := testNow.UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	for i := range rows {
		fmt.Fprintf(&sb, "%d.25,%s,Compute %d,USD\n", i%7+1, day, i%13)
	}
	return []byte(sb.String())
}

// limitsCheck runs the same requests against a server with billing on and
// off: a second invite, a file over the Free plan's monthly rows, and a
// range beyond its history.
type limitsCheck struct {
	t     *testing.T
	b     *bundle
	org   store.Org
	c     *client
	token string
}

func newLimitsCheck(t *testing.T, b *bundle) *limitsCheck {
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Acme"})
	_, token, err := b.st.CreateAPIToken(context.Background(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	c.get("/members")
	return &limitsCheck{t: t, b: b, org: org, c: c, token: token}
}

func (l *limitsCheck) invite(email string) *httptest.ResponseRecorder {
	l.c.get("/members")
	return l.c.post("/invites", url.Values{"email": {email}, "role": {"member"}})
}

func (l *limitsCheck) importFile(name string, body []byte) (*httptest.ResponseRecorder, map[string]any) {
	req := apiRequest(http.MethodPost, "/api/v1/imports?filename="+name, l.token, string(body))
	req.Header.Set("Content-Type", "text/csv")
	rec := l.c.do(req)
	var got map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &got)
	return rec, got
}

func (l *limitsCheck) invites() int {
	invs, err := l.b.st.Invites(context.Background(), l.org.ID)
	if err != nil {
		l.t.Fatal(err)
	}
	return len(invs)
}

func (l *limitsCheck) imports() int {
	imps, err := l.b.st.Imports(context.Background(), l.org.ID, 100)
	if err != nil {
		l.t.Fatal(err)
	}
	return len(imps)
}

func (l *limitsCheck) spend(daysBack int) (*httptest.ResponseRecorder, map[string]any) {
	today := testNow.UTC()
	q := "/api/v1/spend?from=" + today.AddDate(0, 0, -daysBack).Format(time.DateOnly) + "&to=" + today.Format(time.DateOnly)
	rec := l.c.do(apiRequest(http.MethodGet, q, l.token, ""))
	var got map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &got)
	return rec, got
}

// TestFreePlanLimitsBite: on Free, a second invite, an import over the
// monthly rows and a range beyond the history window are refused with a
// message naming the limit and a link to upgrade, and write nothing; after
// the subscription's webhook, all of them pass.
func TestFreePlanLimitsBite(t *testing.T) {
	t.Parallel()
	bb := setupBilling(t, false, "")
	l := newLimitsCheck(t, bb.bundle)
	cus := "cus_limits"
	if err := bb.st.SetStripeCustomer(context.Background(), l.org.ID, cus); err != nil {
		t.Fatal(err)
	}

	if rec := l.invite("first@example.com"); rec.Code != http.StatusCreated {
		t.Fatalf("first invite on Free: %d", rec.Code)
	}
	rec := l.invite("second@example.com")
	d := doc(t, rec)
	msg := d.Find("[data-testid=limit-error]").Text()
	href, _ := d.Find("[data-testid=upgrade-link]").Attr("href")
	if rec.Code != http.StatusPaymentRequired || !strings.Contains(msg, "Free plan has 1 seat") || href != "/settings/billing" {
		t.Fatalf("second invite: %d %q %q", rec.Code, msg, href)
	}
	if n := l.invites(); n != 1 {
		t.Fatalf("invites = %d after a refused one", n)
	}

	big := overQuotaCSV(int(billing.Free.RowsMonth) + 1)
	rec, got := l.importFile("big.csv", big)
	if rec.Code != http.StatusPaymentRequired || !strings.Contains(fmt.Sprint(got["error"]), "The Free plan imports up to 10,000 charge rows a month") ||
		got["upgrade_url"] != "http://burnrate.test/settings/billing" {
		t.Fatalf("over-quota import: %d %s", rec.Code, rec.Body)
	}
	if n := l.imports(); n != 0 {
		t.Fatalf("imports recorded = %d after a refused file", n)
	}
	if has, _ := bb.st.HasSpend(context.Background(), l.org.ID); has {
		t.Fatal("charges written by a refused import")
	}
	// The same through the browser's upload.
	rec = l.c.postFile("/imports", "file", "big.csv", big, url.Values{})
	if !strings.Contains(doc(t, rec).Find("[data-testid=import-error]").Text(), "10,000 charge rows a month") || l.imports() != 0 {
		t.Fatalf("over-quota upload: %d %s", rec.Code, rec.Body)
	}
	// A file that fits is imported, and counts.
	if rec, _ := l.importFile("small.csv", overQuotaCSV(9_000)); rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		t.Fatalf("small import: %d %s\n%s", rec.Code, rec.Body, bb.logs)
	}
	if rec, got := l.importFile("more.csv", overQuotaCSV(1_001)); rec.Code != http.StatusPaymentRequired ||
		!strings.Contains(fmt.Sprint(got["error"]), "has imported 9,000 this month") {
		t.Fatalf("import past what is left: %d %s", rec.Code, rec.Body)
	}

	if rec, got := l.spend(60); rec.Code != http.StatusPaymentRequired || !strings.Contains(fmt.Sprint(got["error"]), "last 30 days") {
		t.Fatalf("spend beyond the history window: %d %s", rec.Code, rec.Body)
	}
	if rec, _ := l.spend(20); rec.Code != http.StatusOK {
		t.Fatalf("spend within the window: %d %s", rec.Code, rec.Body)
	}
	rec = l.c.get("/dashboard?range=90d")
	if rec.Code != http.StatusPaymentRequired || doc(t, rec).Find("[data-testid=upgrade-link]").Length() != 1 {
		t.Fatalf("dashboard beyond the window: %d", rec.Code)
	}
	if doc(t, l.c.get("/settings/digest")).Find("[data-testid=limit-error]").Length() != 1 {
		t.Fatal("the digest page does not say the digest is off on Free")
	}

	bb.mustDeliver(t, stripeEvent("evt_up", "customer.subscription.created", time.Now(), subscriptionObj("sub_1", cus, "active", "price_team_monthly")))
	if rec := l.invite("second@example.com"); rec.Code != http.StatusCreated {
		t.Fatalf("second invite on Team: %d", rec.Code)
	}
	if rec, _ := l.importFile("big.csv", big); rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		t.Fatalf("import on Team: %d %s", rec.Code, rec.Body)
	}
	if rec, _ := l.spend(60); rec.Code != http.StatusOK {
		t.Fatalf("spend on Team: %d", rec.Code)
	}
	if rec := l.c.get("/dashboard?range=90d"); rec.Code != http.StatusOK {
		t.Fatalf("dashboard on Team: %d", rec.Code)
	}
	if doc(t, l.c.get("/settings/digest")).Find("[data-testid=limit-error]").Length() != 0 {
		t.Fatal("the digest page says the digest is off on Team")
	}

	// Cancelled: back to Free, and every row is still there.
	bb.mustDeliver(t, stripeEvent("evt_down", "customer.subscription.deleted", time.Now().Add(time.Second), subscriptionObj("sub_1", cus, "canceled", "price_team_monthly")))
	if n := l.imports(); n != 2 {
		t.Fatalf("imports after the downgrade = %d, want 2", n)
	}
	if rec, _ := l.spend(20); rec.Code != http.StatusOK {
		t.Fatalf("spend on Free again: %d", rec.Code)
	}
	if rec := l.invite("third@example.com"); rec.Code != http.StatusPaymentRequired {
		t.Fatalf("third invite back on Free: %d", rec.Code)
	}
}

// TestBillingOffNoLimits: without a Stripe key, the same requests all pass,
// the billing page says billing is off, and the webhook does not exist.
func TestBillingOffNoLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l := newLimitsCheck(t, b)
	for _, email := range []string{"first@example.com", "second@example.com", "third@example.com"} {
		if rec := l.invite(email); rec.Code != http.StatusCreated {
			t.Fatalf("invite %s with billing off: %d", email, rec.Code)
		}
	}
	if rec, _ := l.importFile("big.csv", overQuotaCSV(int(billing.Free.RowsMonth)+1)); rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		t.Fatalf("import with billing off: %d %s", rec.Code, rec.Body)
	}
	if rec, _ := l.spend(400); rec.Code != http.StatusOK {
		t.Fatalf("spend with billing off: %d", rec.Code)
	}
	if rec := l.c.get("/dashboard?range=90d"); rec.Code != http.StatusOK {
		t.Fatalf("dashboard with billing off: %d", rec.Code)
	}
	rec := l.c.get("/settings/billing")
	if rec.Code != http.StatusOK || doc(t, rec).Find("[data-testid=billing-off]").Length() != 1 {
		t.Fatalf("billing page with billing off: %d", rec.Code)
	}
	if rec := l.c.post("/settings/billing/checkout", url.Values{"plan": {"team"}, "interval": {"monthly"}}); rec.Code != http.StatusNotFound {
		t.Fatalf("checkout with billing off: %d", rec.Code)
	}
	req := httptest.NewRequest(http.MethodPost, "/billing/webhook", strings.NewReader(`{}`))
	w := httptest.NewRecorder()
	b.srv.ServeHTTP(w, req)
	if w.Code != http.StatusNotFound {
		t.Fatalf("webhook with billing off: %d", w.Code)
	}
}

// TestBillingPageForOwners: the page shows the plan and usage to owners
// only, and Upgrade answers with a redirect to the Checkout session
// stripe-mock made.
func TestBillingPageForOwners(t *testing.T) {
	t.Parallel()
	b := setupBilling(t, true, "")
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	admin := storetest.Member(t, b.st, org, access.Admin)
	ac := b.client(t)
	ac.login(admin.Email)
	if rec := ac.get("/settings/billing"); rec.Code != http.StatusForbidden {
		t.Fatalf("admin on the billing page: %d", rec.Code)
	}
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/settings/billing"))
	if got := d.Find("[data-testid=plan-name]").Text(); got != "Free" {
		t.Fatalf("plan = %q", got)
	}
	if got := d.Find("[data-testid=usage-seats-text]").Text(); got != "1 of 1 seats (members besides the first, and open invites)" {
		t.Fatalf("seats = %q", got)
	}
	if got := d.Find("[data-testid=usage-rows] progress").AttrOr("max", ""); got != "10000" {
		t.Fatalf("rows bar max = %q", got)
	}
	// No customer yet: no invoices, and Stripe is not asked.
	if d := doc(t, c.get("/settings/billing/invoices")); d.Find("[data-testid=no-invoices]").Length() != 1 || len(b.mock.Requests("GET", "/v1/invoices")) != 0 {
		t.Fatal("invoices before any customer")
	}
	rec := c.post("/settings/billing/checkout", url.Values{"plan": {"team"}, "interval": {"monthly"}})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "https://checkout.stripe.com/") {
		t.Fatalf("upgrade: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := c.post("/settings/billing/checkout", url.Values{"plan": {"free"}, "interval": {"monthly"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("checkout for free: %d", rec.Code)
	}
	rec = c.post("/settings/billing/portal", nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") == "" {
		t.Fatalf("portal: %d", rec.Code)
	}
	if n := len(b.mock.Requests("POST", "/v1/customers")); n != 1 {
		t.Fatalf("customers created = %d", n)
	}
	ob, _ := b.st.OrgBilling(context.Background(), org.ID)
	d = doc(t, c.get("/settings/billing/invoices"))
	list := b.mock.Requests("GET", "/v1/invoices")
	if len(list) != 1 || list[0].Form.Get("customer") != ob.CustomerID || d.Find("[data-testid=invoice]").Length() == 0 ||
		!strings.Contains(d.Find("[data-testid=invoice]").First().Text(), "10.00 USD") {
		t.Fatalf("invoices: asked %+v, page %q", list, d.Find("[data-testid=invoices]").Text())
	}
	if rec := c.get("/settings/billing/success?session_id=cs_test_1"); doc(t, rec).Find("[data-testid=checkout-success]").Length() != 1 {
		t.Fatalf("success page: %d", rec.Code)
	}
	if rec := c.get("/settings/billing/cancel"); doc(t, rec).Find("[data-testid=checkout-cancel]").Length() != 1 {
		t.Fatalf("cancel page: %d", rec.Code)
	}
}
