// Package billing is Burnrate's side of Stripe: the plans and their limits,
// Checkout and the Billing Portal, and the webhook that applies Stripe's
// events to an org's plan. With no Stripe key configured — a self-hosted
// install — billing is off and every org is unlimited. See docs/billing.md.
package billing

import (
	"fmt"
	"strings"
	"time"

	"github.com/burnrate/burnrate/store"
)

// Plan is what an org pays for and what it may use. Zero limits mean
// unlimited.
type Plan struct {
	Name  string // as stored in orgs.plan: free, team, business
	Title string
	// Seats is how many people an org may add to its first member (who
	// made it): its other members and its open invites count.
	Seats int64
	// RowsMonth is how many charge rows an org may import per calendar
	// month (in its time zone).
	RowsMonth int64
	// HistoryDays is how far back the dashboard and the spend API reach:
	// a range may start at most this many days before today.
	HistoryDays int
	// Notifications are the daily digest and budget alerts.
	Notifications bool
}

// The plans on offer when billing is on. Prices are Stripe's: their ids come
// from configuration (Prices).
var (
	Free     = Plan{Name: "free", Title: "Free", Seats: 1, RowsMonth: 10_000, HistoryDays: 30}
	Team     = Plan{Name: "team", Title: "Team", Seats: 10, RowsMonth: 1_000_000, HistoryDays: 400, Notifications: true}
	Business = Plan{Name: "business", Title: "Business", Seats: 50, RowsMonth: 20_000_000, Notifications: true}
	// Unlimited is every org's plan when billing is off.
	Unlimited = Plan{Name: "self-hosted", Title: "Self-hosted", Notifications: true}
)

// Plans lists the plans in order, cheapest first.
var Plans = []Plan{Free, Team, Business}

// PlanNamed returns the plan called name (free, team, business).
func PlanNamed(name string) (Plan, bool) {
	for _, p := range Plans {
		if p.Name == name {
			return p, true
		}
	}
	return Plan{}, false
}

// PlanNames lists the plans' names, for messages.
func PlanNames() string {
	names := make([]string, len(Plans))
	for i, p := range Plans {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Intervals a paid plan is billed at.
const (
	Monthly = "monthly"
	Yearly  = "yearly"
)

// Prices are the Stripe Price ids of the paid plans (STRIPE_PRICE_TEAM_MONTHLY
// and the others, docs/billing.md).
type Prices struct {
	TeamMonthly, TeamYearly         string
	BusinessMonthly, BusinessYearly string
}

// ID returns the price of plan billed at interval.
func (p Prices) ID(plan, interval string) (string, error) {
	var id string
	switch plan + "/" + interval {
	case "team/" + Monthly:
		id = p.TeamMonthly
	case "team/" + Yearly:
		id = p.TeamYearly
	case "business/" + Monthly:
		id = p.BusinessMonthly
	case "business/" + Yearly:
		id = p.BusinessYearly
	default:
		return "", fmt.Errorf("billing: no %q plan billed %q: choose team or business, monthly or yearly", plan, interval)
	}
	if id == "" {
		return "", fmt.Errorf("billing: the %s plan billed %s has no Stripe price configured", plan, interval)
	}
	return id, nil
}

// Plan returns the plan a price is for.
func (p Prices) Plan(priceID string) (Plan, bool) {
	switch priceID {
	case "":
		return Plan{}, false
	case p.TeamMonthly, p.TeamYearly:
		return Team, true
	case p.BusinessMonthly, p.BusinessYearly:
		return Business, true
	}
	return Plan{}, false
}

// DefaultGrace is how long an org keeps its plan after a failed payment.
const DefaultGrace = 7 * 24 * time.Hour

// Config turns billing on. The zero value is a self-hosted install.
type Config struct {
	SecretKey     string
	WebhookSecret string
	Prices        Prices
	// BaseURL is where users reach Burnrate: Checkout and the Portal send
	// them back there.
	BaseURL string
	// APIURL is Stripe's API (empty: api.stripe.com); tests point it at
	// stripe-mock.
	APIURL string
	// Grace is how long an org keeps its plan after a failed payment
	// (DefaultGrace when 0).
	Grace time.Duration
}

// Enabled reports whether Stripe billing is configured.
func (c Config) Enabled() bool { return c.SecretKey != "" }

// PlanOf returns the limits that apply to org: Unlimited with billing off,
// else its plan (Free for a name no plan has).
func (c Config) PlanOf(org store.Org) Plan {
	if !c.Enabled() {
		return Unlimited
	}
	if p, ok := PlanNamed(org.Plan); ok {
		return p
	}
	return Free
}

func (c Config) grace() time.Duration {
	if c.Grace > 0 {
		return c.Grace
	}
	return DefaultGrace
}

// UpgradePath is the billing page, where every limit's message points.
const UpgradePath = "/settings/billing"
