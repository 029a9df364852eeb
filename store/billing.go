package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// OrgBilling is what Stripe billing keeps about an org: its plan and where
// its subscription stands (see docs/billing.md).
type OrgBilling struct {
	OrgID          int64
	Plan           string // the plan in force: its limits apply
	PlanStatus     string // active, past_due, canceled
	StripePlan     string // the plan the subscription is for ("" before any)
	CustomerID     string
	SubscriptionID string
	RenewsAt       *time.Time
	GraceUntil     *time.Time
	SubscriptionAt *time.Time // the last subscription event applied
	InvoiceAt      *time.Time // the last invoice event applied
}

const orgBillingColumns = `id, plan, plan_status, coalesce(stripe_plan, ''), coalesce(stripe_customer_id, ''),
	coalesce(stripe_subscription_id, ''), plan_renews_at, plan_grace_until, stripe_subscription_at, stripe_invoice_at`

func scanOrgBilling(row pgx.Row) (OrgBilling, error) {
	var b OrgBilling
	err := row.Scan(&b.OrgID, &b.Plan, &b.PlanStatus, &b.StripePlan, &b.CustomerID, &b.SubscriptionID,
		&b.RenewsAt, &b.GraceUntil, &b.SubscriptionAt, &b.InvoiceAt)
	return b, err
}

// OrgBilling returns orgID's billing state. Returns ErrNotFound if there is
// no such org.
func (s *Store) OrgBilling(ctx context.Context, orgID int64) (OrgBilling, error) {
	b, err := scanOrgBilling(s.q.QueryRow(ctx, `SELECT `+orgBillingColumns+` FROM orgs WHERE id = $1`, orgID))
	return b, mapError("get org billing", err)
}

// LockOrgBilling returns orgID's billing state and locks the org's row until
// the transaction ends, so that changes to it (an event applied, a customer
// created) take turns. Call it inside InTx. Returns ErrNotFound if there is
// no such org.
func (s *Store) LockOrgBilling(ctx context.Context, orgID int64) (OrgBilling, error) {
	b, err := scanOrgBilling(s.q.QueryRow(ctx, `SELECT `+orgBillingColumns+` FROM orgs WHERE id = $1 FOR UPDATE`, orgID))
	return b, mapError("lock org billing", err)
}

// OrgIDByStripeCustomer returns the org whose Stripe customer is customerID.
// Returns ErrNotFound if none is.
func (s *Store) OrgIDByStripeCustomer(ctx context.Context, customerID string) (int64, error) {
	var id int64
	err := s.q.QueryRow(ctx, `SELECT id FROM orgs WHERE stripe_customer_id = $1`, customerID).Scan(&id)
	return id, mapError("get org by stripe customer", err)
}

// SetStripeCustomer records orgID's Stripe customer. Returns ErrConflict if
// another org has it.
func (s *Store) SetStripeCustomer(ctx context.Context, orgID int64, customerID string) error {
	tag, err := s.q.Exec(ctx, `UPDATE orgs SET stripe_customer_id = $2 WHERE id = $1`, orgID, customerID)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("set stripe customer", err)
}

// SaveOrgBilling writes b's plan, status, subscription, renewal, grace and
// event times to its org (not the customer, which is set once with
// SetStripeCustomer). Returns ErrNotFound if there is no such org.
func (s *Store) SaveOrgBilling(ctx context.Context, b OrgBilling) error {
	tag, err := s.q.Exec(ctx, `
		UPDATE orgs SET plan = $2, plan_status = $3, stripe_plan = nullif($4, ''),
			stripe_subscription_id = nullif($5, ''), plan_renews_at = $6, plan_grace_until = $7,
			stripe_subscription_at = $8, stripe_invoice_at = $9
		WHERE id = $1`,
		b.OrgID, b.Plan, b.PlanStatus, b.StripePlan, b.SubscriptionID, b.RenewsAt, b.GraceUntil, b.SubscriptionAt, b.InvoiceAt)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("save org billing", err)
}

// SetOrgPlan puts orgID on plan, active, with no grace period running: an
// operator's change ('burnrate org plan --set'). Returns ErrNotFound if there
// is no such org.
func (s *Store) SetOrgPlan(ctx context.Context, orgID int64, plan string) error {
	tag, err := s.q.Exec(ctx, `
		UPDATE orgs SET plan = $2, plan_status = 'active', plan_grace_until = NULL WHERE id = $1`, orgID, plan)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("set org plan", err)
}

// StripeEvent is a Stripe webhook event as received.
type StripeEvent struct {
	ID         string
	Type       string
	OrgID      int64 // 0 when no org was found for it
	CreatedAt  time.Time
	APIVersion string
	Payload    []byte
}

// RecordStripeEvent stores ev unless an event with its id is stored already,
// and reports whether it was new. Inside a transaction, a concurrent delivery
// of the same event waits for the first to commit and then finds it.
func (s *Store) RecordStripeEvent(ctx context.Context, ev StripeEvent) (bool, error) {
	var org *int64
	if ev.OrgID != 0 {
		org = &ev.OrgID
	}
	tag, err := s.q.Exec(ctx, `
		INSERT INTO stripe_events (id, type, org_id, created_at, api_version, payload)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`, ev.ID, ev.Type, org, ev.CreatedAt, ev.APIVersion, ev.Payload)
	if err != nil {
		return false, mapError("record stripe event", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SetStripeEventOrg notes which org an event was applied to.
func (s *Store) SetStripeEventOrg(ctx context.Context, id string, orgID int64) error {
	_, err := s.q.Exec(ctx, `UPDATE stripe_events SET org_id = $2 WHERE id = $1`, id, orgID)
	return mapError("set stripe event org", err)
}

// StripeEventCount is how many events are stored, for tests and the CLI.
func (s *Store) StripeEventCount(ctx context.Context) (int64, error) {
	var n int64
	err := s.q.QueryRow(ctx, `SELECT count(*) FROM stripe_events`).Scan(&n)
	return n, mapError("count stripe events", err)
}

// DowngradeLapsed drops to 'free' every org whose grace period after a
// failed payment ended before now, keeping its subscription's plan in
// stripe_plan so that a later payment restores it, and returns their ids.
// No data is deleted: the Free plan's limits apply from now on.
func (s *Store) DowngradeLapsed(ctx context.Context, now time.Time) ([]int64, error) {
	rows, err := s.q.Query(ctx, `
		UPDATE orgs SET plan = 'free', plan_status = 'unpaid', plan_grace_until = NULL
		WHERE plan_status = 'past_due' AND plan_grace_until IS NOT NULL AND plan_grace_until <= $1
		RETURNING id`, now)
	if err != nil {
		return nil, mapError("downgrade lapsed orgs", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, mapError("downgrade lapsed orgs", err)
}

// SeatsTaken is orgID's members plus its open invites: what an invite
// counts against the plan's seats.
func (s *Store) SeatsTaken(ctx context.Context, orgID int64) (members, invites int64, err error) {
	err = s.q.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM memberships WHERE org_id = $1),
			(SELECT count(*) FROM invites WHERE org_id = $1 AND accepted_at IS NULL AND expires_at > now())`,
		orgID).Scan(&members, &invites)
	return members, invites, mapError("seats taken", err)
}

// RowsImportedSince is the charge rows orgID's successful imports wrote
// since since, removed ones too: what the plan's monthly row quota counts.
func (s *Store) RowsImportedSince(ctx context.Context, orgID int64, since time.Time) (int64, error) {
	var n int64
	err := s.q.QueryRow(ctx, `
		SELECT coalesce(sum(rows), 0)::bigint FROM imports
		WHERE org_id = $1 AND status IN ('succeeded', 'removed') AND finished_at >= $2`, orgID, since).Scan(&n)
	return n, mapError("rows imported since", err)
}

// LockImportQuota holds orgID's import quota until the transaction ends:
// imports of one org check the quota and commit one at a time, so that two
// at once cannot each fit what only one does. Call it inside InTx.
func (s *Store) LockImportQuota(ctx context.Context, orgID int64) error {
	_, err := s.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('import_quota:' || $1::bigint, 0))`, orgID)
	return mapError("lock import quota", err)
}
