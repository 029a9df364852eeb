package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/burnrate/burnrate/jsonlimit"
	"github.com/burnrate/burnrate/store"
)

// MaxWebhookBytes caps a webhook's body. Stripe's events are a few
// kilobytes; a subscription with many items stays far below this.
const MaxWebhookBytes = 256 << 10

// ErrBadSignature is returned for a webhook whose signature does not verify.
var ErrBadSignature = errors.New("billing: webhook signature does not verify")

// ErrBadEvent is returned for a webhook whose body is refused before its
// signature is checked: JSON nested deeper than any event (jsonlimit).
var ErrBadEvent = errors.New("billing: webhook body refused")

// Plan statuses, as stored in orgs.plan_status.
const (
	StatusActive   = "active"
	StatusPastDue  = "past_due" // a payment failed: the plan holds until plan_grace_until
	StatusUnpaid   = "unpaid"   // the grace period ended (or Stripe gave up): on Free until paid
	StatusCanceled = "canceled" // the subscription ended: on Free
)

// VerifyWebhook checks a Stripe webhook's signature (the Stripe-Signature
// header, within Stripe's default five-minute tolerance) against the
// endpoint secret and returns the event it carries.
//
// stripe-go v76 reads events of API version 2023-10-16 (stripe.APIVersion)
// and by default refuses others even when their signature is good. The
// endpoint should be created at that version (docs/billing.md); an event of
// another version is still verified, then accepted and logged, since the
// fields read here (ids, status, the price, the customer) are the same in
// the versions around it.
func (c Config) VerifyWebhook(payload []byte, signature string) (stripe.Event, error) {
	// The same bound as every JSON body from outside, before stripe-go
	// reads it.
	if err := jsonlimit.Check(payload); err != nil {
		return stripe.Event{}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signature, c.WebhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return stripe.Event{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return ev, nil
}

// WebhookResult says what an event did.
type WebhookResult struct {
	EventID   string
	Type      string
	Duplicate bool   // seen before: nothing done
	OrgID     int64  // the org it was applied to (0: none)
	Note      string // why it changed nothing, when it did not
}

// HandleWebhook verifies a webhook and applies its event: it is stored by
// its id and applied in one transaction, so a re-delivery (or two
// deliveries at once: the second waits for the first's insert) changes
// nothing. Returns an error wrapping ErrBadSignature for a forged or stale
// request.
func (s *Service) HandleWebhook(ctx context.Context, payload []byte, signature string) (WebhookResult, error) {
	if !s.Enabled() {
		return WebhookResult{}, ErrOff
	}
	ev, err := s.VerifyWebhook(payload, signature)
	if err != nil {
		return WebhookResult{}, err
	}
	res := WebhookResult{EventID: ev.ID, Type: string(ev.Type)}
	if ev.APIVersion != stripe.APIVersion && s.log != nil {
		s.log.WarnContext(ctx, "stripe webhook: event of another API version than stripe-go reads; set the endpoint's version (docs/billing.md)",
			slog.String("event_id", ev.ID), slog.String("api_version", ev.APIVersion), slog.String("want", stripe.APIVersion))
	}
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		fresh, err := tx.RecordStripeEvent(ctx, store.StripeEvent{
			ID: ev.ID, Type: string(ev.Type), CreatedAt: time.Unix(ev.Created, 0), APIVersion: ev.APIVersion, Payload: payload,
		})
		if err != nil {
			return err
		}
		if !fresh {
			res.Duplicate = true
			return nil
		}
		res.OrgID, res.Note, err = s.apply(ctx, tx, ev)
		if err != nil {
			return err
		}
		if res.OrgID != 0 {
			return tx.SetStripeEventOrg(ctx, ev.ID, res.OrgID)
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("stripe event %s (%s): %w", ev.ID, ev.Type, err)
	}
	return res, nil
}

// apply changes the org an event is about, in tx. It returns the org and,
// when nothing changed, why.
func (s *Service) apply(ctx context.Context, tx *store.Store, ev stripe.Event) (int64, string, error) {
	at := time.Unix(ev.Created, 0)
	switch ev.Type {
	case "checkout.session.completed":
		var cs stripe.CheckoutSession
		if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
			return 0, "", fmt.Errorf("read checkout session: %w", err)
		}
		return s.applyCheckout(ctx, tx, &cs)
	case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted":
		var sub stripe.Subscription
		if err := json.Unmarshal(ev.Data.Raw, &sub); err != nil {
			return 0, "", fmt.Errorf("read subscription: %w", err)
		}
		return s.applySubscription(ctx, tx, &sub, ev.Type == "customer.subscription.deleted", at)
	case "invoice.paid", "invoice.payment_failed":
		var inv stripe.Invoice
		if err := json.Unmarshal(ev.Data.Raw, &inv); err != nil {
			return 0, "", fmt.Errorf("read invoice: %w", err)
		}
		return s.applyInvoice(ctx, tx, &inv, ev.Type == "invoice.paid", at)
	}
	return 0, "not an event Burnrate handles", nil
}

// orgFor finds the org a customer (and, failing that, the org id in the
// metadata Burnrate set) belongs to, locked for the rest of tx. An org that
// has another customer than the event's is not it.
func orgFor(ctx context.Context, tx *store.Store, customer *stripe.Customer, orgIDs ...string) (store.OrgBilling, bool, error) {
	cus := ""
	if customer != nil {
		cus = customer.ID
	}
	if cus != "" {
		id, err := tx.OrgIDByStripeCustomer(ctx, cus)
		if err == nil {
			b, err := tx.LockOrgBilling(ctx, id)
			return b, err == nil, err
		}
		if !errors.Is(err, store.ErrNotFound) {
			return store.OrgBilling{}, false, err
		}
	}
	for _, v := range orgIDs {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			continue
		}
		b, err := tx.LockOrgBilling(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return b, false, err
		}
		if b.CustomerID != "" && b.CustomerID != cus {
			continue
		}
		if b.CustomerID == "" && cus != "" {
			if err := tx.SetStripeCustomer(ctx, b.OrgID, cus); err != nil {
				return b, false, err
			}
			b.CustomerID = cus
		}
		return b, true, nil
	}
	return store.OrgBilling{}, false, nil
}

func (s *Service) applyCheckout(ctx context.Context, tx *store.Store, cs *stripe.CheckoutSession) (int64, string, error) {
	b, ok, err := orgFor(ctx, tx, cs.Customer, cs.ClientReferenceID, cs.Metadata["org_id"])
	if err != nil || !ok {
		return 0, "no org for this checkout session", err
	}
	// The plan comes with the subscription's own events; this records the
	// subscription early, so that the page can say it is on its way.
	if cs.Subscription != nil && cs.Subscription.ID != "" && b.SubscriptionID == "" {
		b.SubscriptionID = cs.Subscription.ID
		return b.OrgID, "", tx.SaveOrgBilling(ctx, b)
	}
	return b.OrgID, "nothing to change", nil
}

// applySubscription applies a subscription's state. Events are not
// delivered in order, so the state applied is the newest by the events' own
// times (Stripe's created), and a subscription that ended stays ended: a
// late "updated" from before its deletion changes nothing.
func (s *Service) applySubscription(ctx context.Context, tx *store.Store, sub *stripe.Subscription, deleted bool, at time.Time) (int64, string, error) {
	b, ok, err := orgFor(ctx, tx, sub.Customer, sub.Metadata["org_id"])
	if err != nil || !ok {
		return 0, "no org for this subscription", err
	}
	status := sub.Status
	if deleted {
		status = stripe.SubscriptionStatusCanceled
	}
	ended := status == stripe.SubscriptionStatusCanceled || status == stripe.SubscriptionStatusIncompleteExpired
	switch {
	case b.SubscriptionID != "" && sub.ID != b.SubscriptionID && ended:
		return b.OrgID, "an ended subscription that is not the org's current one", nil
	case sub.ID == b.SubscriptionID && b.PlanStatus == StatusCanceled:
		return b.OrgID, "the subscription has ended already", nil
	case b.SubscriptionAt != nil && at.Before(*b.SubscriptionAt):
		return b.OrgID, "older than the subscription state already applied", nil
	}
	var price string
	if sub.Items != nil && len(sub.Items.Data) > 0 && sub.Items.Data[0].Price != nil {
		price = sub.Items.Data[0].Price.ID
	}
	plan, known := s.Prices.Plan(price)
	b.SubscriptionID, b.SubscriptionAt = sub.ID, &at
	b.RenewsAt = nil
	if sub.CurrentPeriodEnd > 0 && !ended {
		t := time.Unix(sub.CurrentPeriodEnd, 0)
		b.RenewsAt = &t
	}
	if known {
		b.StripePlan = plan.Name
	}
	switch status {
	case stripe.SubscriptionStatusActive, stripe.SubscriptionStatusTrialing:
		if !known {
			return b.OrgID, "", errors.Join(tx.SaveOrgBilling(ctx, b), s.unknownPrice(ctx, b.OrgID, price))
		}
		b.Plan, b.PlanStatus, b.GraceUntil = plan.Name, StatusActive, nil
	case stripe.SubscriptionStatusPastDue:
		if known {
			b.Plan = plan.Name
		}
		s.startGrace(&b)
	case stripe.SubscriptionStatusUnpaid, stripe.SubscriptionStatusPaused:
		// Stripe gave up collecting (or the subscription is paused):
		// Free until it is paid. Nothing is deleted.
		b.Plan, b.PlanStatus, b.GraceUntil = Free.Name, StatusUnpaid, nil
	case stripe.SubscriptionStatusCanceled, stripe.SubscriptionStatusIncompleteExpired:
		b.Plan, b.PlanStatus, b.GraceUntil = Free.Name, StatusCanceled, nil
	default:
		// incomplete: the first payment is still being made; the plan
		// starts with the "active" that follows it.
		return b.OrgID, "", tx.SaveOrgBilling(ctx, b)
	}
	return b.OrgID, "", tx.SaveOrgBilling(ctx, b)
}

// unknownPrice logs a subscription to a price none of the STRIPE_PRICE_*
// settings names: a configuration mistake to fix, not a reason for Stripe to
// retry.
func (s *Service) unknownPrice(ctx context.Context, orgID int64, price string) error {
	if s.log != nil {
		s.log.ErrorContext(ctx, "stripe webhook: subscription to a price no STRIPE_PRICE_* setting names; the org's plan is unchanged",
			slog.Int64("org_id", orgID), slog.String("price", price))
	}
	return nil
}

// startGrace puts b in its grace period after a failed payment, unless one
// runs already: repeated failures do not extend it.
func (s *Service) startGrace(b *store.OrgBilling) {
	if b.PlanStatus == StatusPastDue && b.GraceUntil != nil {
		return
	}
	until := s.now().Add(s.grace())
	b.PlanStatus, b.GraceUntil = StatusPastDue, &until
}

// applyInvoice applies a payment that failed (the grace period starts) or
// succeeded (the plan is back in good standing, and a plan dropped when the
// grace period ran out comes back).
func (s *Service) applyInvoice(ctx context.Context, tx *store.Store, inv *stripe.Invoice, paid bool, at time.Time) (int64, string, error) {
	b, ok, err := orgFor(ctx, tx, inv.Customer)
	if err != nil || !ok {
		return 0, "no org for this invoice", err
	}
	switch {
	case inv.Subscription == nil || inv.Subscription.ID == "":
		return b.OrgID, "not a subscription's invoice", nil
	case b.SubscriptionID != "" && inv.Subscription.ID != b.SubscriptionID:
		return b.OrgID, "an invoice of another subscription than the org's current one", nil
	case b.PlanStatus == StatusCanceled:
		return b.OrgID, "the subscription has ended", nil
	case b.InvoiceAt != nil && at.Before(*b.InvoiceAt):
		return b.OrgID, "older than the invoice state already applied", nil
	}
	b.SubscriptionID, b.InvoiceAt = inv.Subscription.ID, &at
	if paid {
		if b.PlanStatus == StatusPastDue || b.PlanStatus == StatusUnpaid {
			if b.StripePlan != "" {
				b.Plan = b.StripePlan
			}
			b.PlanStatus, b.GraceUntil = StatusActive, nil
		}
	} else if b.Plan != Free.Name {
		s.startGrace(&b)
	} else {
		// A first payment that failed: no paid plan to hold, no grace.
		return b.OrgID, "no paid plan to hold", tx.SaveOrgBilling(ctx, b)
	}
	return b.OrgID, "", tx.SaveOrgBilling(ctx, b)
}
