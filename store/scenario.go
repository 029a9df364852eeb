package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/label"
)

// Scenario kinds: which page (and API) a scenario's inputs are for.
const (
	ScenarioBreakEven = "breakeven"
	ScenarioAdvice    = "advice"
)

// Scenario is a named set of advisor or break-even inputs an org saved to
// reopen and share. Inputs is the JSON body of the matching API request.
type Scenario struct {
	OrgID        int64
	ID           int64
	Name         string
	Kind         string
	Inputs       json.RawMessage
	CreatedBy    int64
	CreatedEmail string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const scenarioColumns = `sc.org_id, sc.id, sc.name, sc.kind, sc.inputs, coalesce(sc.created_by, 0), coalesce(u.email, ''),
	sc.created_at, sc.updated_at`

const scenarioFrom = ` FROM scenarios sc LEFT JOIN users u ON u.id = sc.created_by `

func scanScenario(row pgx.Row) (Scenario, error) {
	var sc Scenario
	err := row.Scan(&sc.OrgID, &sc.ID, &sc.Name, &sc.Kind, &sc.Inputs, &sc.CreatedBy, &sc.CreatedEmail, &sc.CreatedAt, &sc.UpdatedAt)
	return sc, err
}

// CreateScenario saves inputs under name for orgID.
func (s *Store) CreateScenario(ctx context.Context, orgID, userID int64, kind, name string, inputs json.RawMessage) (Scenario, error) {
	var id int64
	err := s.q.QueryRow(ctx, `
		INSERT INTO scenarios (org_id, name, kind, inputs, created_by) VALUES ($1, $2, $3, $4, NULLIF($5, 0))
		RETURNING id`, orgID, label.Clean(name), kind, inputs, userID).Scan(&id)
	if err != nil {
		return Scenario{}, mapError("create scenario", err)
	}
	return s.Scenario(ctx, orgID, id)
}

// Scenario returns one of orgID's scenarios. Returns ErrNotFound if there is
// none.
func (s *Store) Scenario(ctx context.Context, orgID, id int64) (Scenario, error) {
	sc, err := scanScenario(s.q.QueryRow(ctx, `SELECT `+scenarioColumns+scenarioFrom+`WHERE sc.org_id = $1 AND sc.id = $2`, orgID, id))
	return sc, mapError("get scenario", err)
}

// Scenarios lists orgID's scenarios of one kind, most recently changed first.
func (s *Store) Scenarios(ctx context.Context, orgID int64, kind string) ([]Scenario, error) {
	rows, err := s.q.Query(ctx, `SELECT `+scenarioColumns+scenarioFrom+`
		WHERE sc.org_id = $1 AND sc.kind = $2 ORDER BY sc.updated_at DESC, sc.id DESC`, orgID, kind)
	if err != nil {
		return nil, mapError("list scenarios", err)
	}
	scs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Scenario, error) { return scanScenario(row) })
	return scs, mapError("list scenarios", err)
}

// DeleteScenario removes one of orgID's scenarios. Returns ErrNotFound if
// there is none.
func (s *Store) DeleteScenario(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM scenarios WHERE org_id = $1 AND id = $2`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("delete scenario", err)
}
