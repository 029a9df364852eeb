package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"

	"github.com/burnrate/burnrate/store"
)

// ErrOff is returned by what needs Stripe when billing is off.
var ErrOff = errors.New("billing is off: no STRIPE_SECRET_KEY")

// Service talks to Stripe for one install: customers, Checkout, the Billing
// Portal, and the webhook. A Service with billing off answers every plan
// question with Unlimited and refuses what needs Stripe with ErrOff.
type Service struct {
	Config
	store *store.Store
	api   *client.API
	log   *slog.Logger
	// Now is the clock (time.Now when nil), for tests.
	Now func() time.Time
}

// New returns the Service for cfg, writing to st (not fenced: the webhook
// does not act for one org).
func New(cfg Config, st *store.Store, log *slog.Logger) *Service {
	s := &Service{Config: cfg, store: st, log: log}
	if cfg.Enabled() {
		bc := &stripe.BackendConfig{
			HTTPClient: &http.Client{Timeout: 30 * time.Second},
			// stripe-go logs errors to stderr by default; ours go
			// through slog where they are handled.
			LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
		}
		if cfg.APIURL != "" {
			bc.URL = stripe.String(cfg.APIURL)
		}
		s.api = client.New(cfg.SecretKey, &stripe.Backends{
			API:     stripe.GetBackendWithConfig(stripe.APIBackend, bc),
			Connect: stripe.GetBackendWithConfig(stripe.ConnectBackend, bc),
			Uploads: stripe.GetBackendWithConfig(stripe.UploadsBackend, bc),
		})
	}
	return s
}

// Enabled reports whether billing is on; a nil Service is off.
func (s *Service) Enabled() bool { return s != nil && s.Config.Enabled() }

// Cfg is the configuration, that of a self-hosted install for a nil Service.
func (s *Service) Cfg() Config {
	if s == nil {
		return Config{}
	}
	return s.Config
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Customer returns org's Stripe customer, creating it the first time: one
// customer per org, made once and stored. The org's row is locked while the
// customer is made, so two requests at once make one (st may be the
// request's store, fenced to the org); the idempotency key
// makes a retried request (or one whose answer was lost) return the same
// customer too.
func (s *Service) Customer(ctx context.Context, st *store.Store, org store.Org, email string) (string, error) {
	if !s.Enabled() {
		return "", ErrOff
	}
	var id string
	err := st.InTx(ctx, func(tx *store.Store) error {
		b, err := tx.LockOrgBilling(ctx, org.ID)
		if err != nil {
			return err
		}
		if b.CustomerID != "" {
			id = b.CustomerID
			return nil
		}
		params := &stripe.CustomerParams{
			Name:  stripe.String(org.Name),
			Email: stripe.String(email),
		}
		params.AddMetadata("org_id", strconv.FormatInt(org.ID, 10))
		params.AddMetadata("org_slug", org.Slug)
		params.SetIdempotencyKey("burnrate-customer-org-" + strconv.FormatInt(org.ID, 10))
		params.Context = ctx
		c, err := s.api.Customers.New(params)
		if err != nil {
			return fmt.Errorf("stripe: create customer: %w", err)
		}
		id = c.ID
		return tx.SetStripeCustomer(ctx, org.ID, c.ID)
	})
	return id, err
}

// Checkout starts a Stripe Checkout session in subscription mode for org to
// subscribe to plan billed at interval, and returns the URL to send the
// owner to. The org's id is in the session's client_reference_id and in the
// metadata of the session and of the subscription it makes.
func (s *Service) Checkout(ctx context.Context, st *store.Store, org store.Org, email, plan, interval string) (string, error) {
	if !s.Enabled() {
		return "", ErrOff
	}
	price, err := s.Prices.ID(plan, interval)
	if err != nil {
		return "", err
	}
	customer, err := s.Customer(ctx, st, org, email)
	if err != nil {
		return "", err
	}
	orgID := strconv.FormatInt(org.ID, 10)
	params := &stripe.CheckoutSessionParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		Customer:          stripe.String(customer),
		ClientReferenceID: stripe.String(orgID),
		LineItems:         []*stripe.CheckoutSessionLineItemParams{{Price: stripe.String(price), Quantity: stripe.Int64(1)}},
		SuccessURL:        stripe.String(s.BaseURL + "/settings/billing/success?session_id={CHECKOUT_SESSION_ID}"),
		CancelURL:         stripe.String(s.BaseURL + "/settings/billing/cancel"),
		SubscriptionData: &stripe.CheckoutSessionSubscriptionDataParams{
			Metadata: map[string]string{"org_id": orgID, "plan": plan},
		},
	}
	params.AddMetadata("org_id", orgID)
	params.AddMetadata("plan", plan)
	params.Context = ctx
	sess, err := s.api.CheckoutSessions.New(params)
	if err != nil {
		return "", fmt.Errorf("stripe: create checkout session: %w", err)
	}
	return sess.URL, nil
}

// Portal opens a Billing Portal session for org (change plan, cancel, card,
// invoices) and returns its URL. The org must have a customer.
func (s *Service) Portal(ctx context.Context, st *store.Store, org store.Org, email string) (string, error) {
	if !s.Enabled() {
		return "", ErrOff
	}
	customer, err := s.Customer(ctx, st, org, email)
	if err != nil {
		return "", err
	}
	params := &stripe.BillingPortalSessionParams{
		Customer:  stripe.String(customer),
		ReturnURL: stripe.String(s.BaseURL + UpgradePath),
	}
	params.Context = ctx
	sess, err := s.api.BillingPortalSessions.New(params)
	if err != nil {
		return "", fmt.Errorf("stripe: create billing portal session: %w", err)
	}
	return sess.URL, nil
}
