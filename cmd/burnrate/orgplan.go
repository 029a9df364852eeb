package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/burnrate/burnrate/billing"
)

// runOrgPlan is 'burnrate org plan': an org's plan and its use of the
// plan's limits, and, with --set, a new plan, for operators of a
// self-hosted or support install. A plan set here stands until Stripe's
// next event about the org's subscription says otherwise.
func runOrgPlan(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("org plan", flag.ContinueOnError)
	slug := fs.String("org", "", "the org's slug (required)")
	set := fs.String("set", "", "put the org on this plan: "+billing.PlanNames())
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || fs.NArg() > 0 {
		return errors.New("org plan: usage: burnrate org plan --org SLUG [--set PLAN] [--json]")
	}
	if *set != "" {
		if _, ok := billing.PlanNamed(*set); !ok {
			return fmt.Errorf("org plan: --set %q: want one of %s", *set, billing.PlanNames())
		}
	}
	db, org, err := openOrg(ctx, cfg, log, "org plan", *slug)
	if err != nil {
		return err
	}
	defer db.close()
	if *set != "" {
		if err := db.store.SetOrgPlan(ctx, org.ID, *set); err != nil {
			return fmt.Errorf("org plan: %w", err)
		}
		log.Info("org plan set", slog.String("org", org.Slug), slog.String("from", org.Plan), slog.String("to", *set))
		if org, err = db.store.Org(ctx, org.ID); err != nil {
			return err
		}
	}
	bc := cfg.billing()
	u, err := bc.UsageOf(ctx, db.store, org, time.Now())
	if err != nil {
		return err
	}
	b, err := db.store.OrgBilling(ctx, org.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{
			"slug": org.Slug, "plan": org.Plan, "status": org.PlanStatus, "billing": bc.Enabled(),
			"limits_applied": u.Plan.Name, "seats": u.Plan.Seats, "members": u.Members, "open_invites": u.Invites,
			"rows_month": u.Plan.RowsMonth, "rows_this_month": u.RowsThisMonth, "history_days": u.Plan.HistoryDays,
			"notifications": u.Plan.Notifications, "stripe_customer": b.CustomerID, "stripe_subscription": b.SubscriptionID,
			"grace_until": b.GraceUntil,
		})
	}
	fmt.Fprintf(stdout, "org:     %s (%s)\nplan:    %s (%s)\n", org.Slug, org.Name, org.Plan, org.PlanStatus)
	if !bc.Enabled() {
		fmt.Fprintln(stdout, "billing: off (no STRIPE_SECRET_KEY): no limits apply, whatever the plan")
	}
	limit := func(n int64) string {
		if n == 0 {
			return "no limit"
		}
		return fmt.Sprint(n)
	}
	fmt.Fprintf(stdout, "seats:   %d members, %d open invites (limit: %s)\n", u.Members, u.Invites, limit(u.Plan.Seats))
	fmt.Fprintf(stdout, "rows:    %d imported this month (limit: %s)\n", u.RowsThisMonth, limit(u.Plan.RowsMonth))
	fmt.Fprintf(stdout, "history: %s days\n", limit(int64(u.Plan.HistoryDays)))
	if b.CustomerID != "" {
		fmt.Fprintf(stdout, "stripe:  customer %s, subscription %s\n", b.CustomerID, b.SubscriptionID)
	}
	if b.GraceUntil != nil {
		fmt.Fprintf(stdout, "grace:   until %s, then Free unless paid\n", b.GraceUntil.UTC().Format(time.RFC3339))
	}
	return nil
}
