package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/label"
)

// Org is a tenant: a team with its own bills, budgets, members and settings.
type Org struct {
	ID         int64
	Slug       string
	Name       string
	TimeZone   string
	Currency   string
	TeamTagKey string
	Plan       string
	PlanStatus string
	CreatedAt  time.Time
}

const orgColumns = "id, slug, name, time_zone, currency, team_tag_key, plan, plan_status, created_at"

func scanOrg(row pgx.Row) (Org, error) {
	var o Org
	err := row.Scan(&o.ID, &o.Slug, &o.Name, &o.TimeZone, &o.Currency, &o.TeamTagKey, &o.Plan, &o.PlanStatus, &o.CreatedAt)
	return o, err
}

// Location is the org's time zone; days on the dashboard are days there.
// An unknown zone (not possible through the settings form) falls back to UTC.
func (o Org) Location() *time.Location {
	loc, err := time.LoadLocation(o.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Org returns the org with id. Returns ErrNotFound if there is none.
func (s *Store) Org(ctx context.Context, id int64) (Org, error) {
	o, err := scanOrg(s.q.QueryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE id = $1`, id))
	return o, mapError("get org", err)
}

// OrgBySlug returns the org with slug. Returns ErrNotFound if there is none.
func (s *Store) OrgBySlug(ctx context.Context, slug string) (Org, error) {
	o, err := scanOrg(s.q.QueryRow(ctx, `SELECT `+orgColumns+` FROM orgs WHERE slug = $1`, slug))
	return o, mapError("get org by slug", err)
}

// CreateOrg creates an org owned by ownerID, picking a free slug derived from
// the name (acme, acme-2, …).
func (s *Store) CreateOrg(ctx context.Context, name string, ownerID int64) (Org, error) {
	var org Org
	err := s.InTx(ctx, func(tx *Store) error {
		base := Slugify(name)
		slug := base
		for i := 2; ; i++ {
			var taken bool
			if err := tx.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM orgs WHERE slug = $1)`, slug).Scan(&taken); err != nil {
				return err
			}
			if !taken {
				break
			}
			slug = base + "-" + itoa(i)
		}
		o, err := scanOrg(tx.q.QueryRow(ctx, `
			INSERT INTO orgs (slug, name) VALUES ($1, $2)
			RETURNING `+orgColumns, slug, label.Clean(name)))
		if err != nil {
			return err
		}
		if _, err := tx.q.Exec(ctx, `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')`, o.ID, ownerID); err != nil {
			return err
		}
		org = o
		return nil
	})
	return org, mapError("create org", err)
}

// DeleteOrg deletes an org and everything of it, in one transaction:
// its charges and GPU usage rollup, which have no foreign key to orgs (a
// check a row would cost every import), then the org, whose foreign keys
// take every other tenant row with it. Other orgs' rows and rollups are
// left as they are. Returns ErrNotFound if there is none.
func (s *Store) DeleteOrg(ctx context.Context, id int64) error {
	return s.InTx(ctx, func(tx *Store) error {
		for _, table := range []string{"charges", "gpu_resource_daily"} {
			if _, err := tx.q.Exec(ctx, `DELETE FROM `+table+` WHERE org_id = $1`, id); err != nil {
				return mapError("delete org", err)
			}
		}
		tag, err := tx.q.Exec(ctx, `DELETE FROM orgs WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			err = pgx.ErrNoRows
		}
		return mapError("delete org", err)
	})
}

// OrgUpdate holds the settings an admin can change.
type OrgUpdate struct {
	Name       string
	TimeZone   string
	Currency   string
	TeamTagKey string
}

// UpdateOrg changes an org's settings. Returns ErrNotFound if there is none.
func (s *Store) UpdateOrg(ctx context.Context, id int64, u OrgUpdate) (Org, error) {
	o, err := scanOrg(s.q.QueryRow(ctx, `
		UPDATE orgs SET name = $2, time_zone = $3, currency = $4, team_tag_key = $5
		WHERE id = $1
		RETURNING `+orgColumns, id, label.Clean(u.Name), u.TimeZone, u.Currency, u.TeamTagKey))
	return o, mapError("update org", err)
}

// UserOrg is an org seen from one member: the org and the member's role.
type UserOrg struct {
	Org
	Role access.Role
}

// OrgsForUser lists the orgs userID belongs to, by name.
func (s *Store) OrgsForUser(ctx context.Context, userID int64) ([]UserOrg, error) {
	rows, err := s.q.Query(ctx, `
		SELECT o.id, o.slug, o.name, o.time_zone, o.currency, o.team_tag_key, o.plan, o.plan_status, o.created_at, m.role
		FROM memberships m JOIN orgs o ON o.id = m.org_id
		WHERE m.user_id = $1
		ORDER BY o.name, o.id`, userID)
	if err != nil {
		return nil, mapError("list orgs for user", err)
	}
	orgs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (UserOrg, error) {
		var u UserOrg
		err := row.Scan(&u.ID, &u.Slug, &u.Name, &u.TimeZone, &u.Currency, &u.TeamTagKey, &u.Plan, &u.PlanStatus, &u.CreatedAt, &u.Role)
		return u, err
	})
	return orgs, mapError("list orgs for user", err)
}

// AllOrgs returns every org, for the jobs that visit each (the hourly
// digest pass, budget evaluation). It is not for requests: they see their
// own org only.
func (s *Store) AllOrgs(ctx context.Context) ([]Org, error) {
	rows, _ := s.q.Query(ctx, `SELECT `+orgColumns+` FROM orgs ORDER BY id`)
	orgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Org, error) { return scanOrg(r) })
	return orgs, mapError("all orgs", err)
}
