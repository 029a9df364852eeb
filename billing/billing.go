// Package billing is Burnrate's side of Stripe: the plans and their limits,
// and webhook signature verification. With no Stripe key configured — a
// self-hosted install — billing is off and every feature is unlocked.
package billing

import (
	"errors"
	"fmt"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"
)

// Config turns billing on. The zero value is a self-hosted install.
type Config struct {
	SecretKey     string
	WebhookSecret string
}

// Enabled reports whether Stripe billing is configured.
func (c Config) Enabled() bool { return c.SecretKey != "" }

// Plan is what an org pays for and what it may use. Zero limits mean
// unlimited.
type Plan struct {
	Name      string
	Seats     int
	RowsMonth int64 // imported charge rows per month
}

// Plans are the plans on offer when billing is on.
var Plans = []Plan{
	{Name: "free", Seats: 1, RowsMonth: 100_000},
	{Name: "team", Seats: 20, RowsMonth: 10_000_000},
	{Name: "business", Seats: 0, RowsMonth: 0},
}

// SelfHosted is the plan of every org when billing is off: no limits.
var SelfHosted = Plan{Name: "self-hosted"}

// PlanFor returns the limits of the named plan; with billing off, every org
// is SelfHosted.
func (c Config) PlanFor(name string) (Plan, error) {
	if !c.Enabled() {
		return SelfHosted, nil
	}
	for _, p := range Plans {
		if p.Name == name {
			return p, nil
		}
	}
	return Plan{}, fmt.Errorf("billing: unknown plan %q", name)
}

// ErrBadSignature is returned for a webhook whose signature does not verify.
var ErrBadSignature = errors.New("billing: webhook signature does not verify")

// VerifyWebhook checks a Stripe webhook's signature (the Stripe-Signature
// header) against the endpoint secret and returns the event it carries.
func (c Config) VerifyWebhook(payload []byte, signature string) (stripe.Event, error) {
	ev, err := webhook.ConstructEvent(payload, signature, c.WebhookSecret)
	if err != nil {
		return stripe.Event{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return ev, nil
}
