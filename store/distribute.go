package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Placement is where a table lives on a Citus cluster (docs/operations.md,
// "Distributing by org").
type Placement string

const (
	// Distributed: sharded by org_id, co-located with every other
	// distributed table, so that all of one org's rows of every table are
	// on one node and each query of one org runs there.
	Distributed Placement = "distributed"
	// Reference: a full copy on every node, for the tables that
	// distributed rows join or have foreign keys to.
	Reference Placement = "reference"
	// Coordinator: on the coordinator only. Those with a foreign key to a
	// reference table become Citus-local tables; the rest stay plain
	// Postgres tables.
	Coordinator Placement = "coordinator"
)

// Decision is a table's placement and why.
type Decision struct {
	Placement Placement
	Why       string
}

// Distribution is the decision for every table of Burnrate's schema, River's
// included: TestEveryTableHasADistributionDecision fails when a migration
// adds a table without one. Distribute converts a database accordingly.
var Distribution = map[string]Decision{
	"users":       {Reference, "every org's members; joined to memberships, imports, budgets, tokens on any node"},
	"orgs":        {Reference, "read on every request, and every tenant table has a foreign key to it"},
	"memberships": {Reference, "read by person, across orgs, on every page (the org switcher and the fence), and written rarely"},

	"imports":                {Distributed, "an org's import history; the other tables co-locate with it"},
	"charges":                {Distributed, "the bulk of the data: one org's rows on one node"},
	"import_periods":         {Distributed, "read and written with its org's charges"},
	"import_extents":         {Distributed, "how far an org's imports reach, written with its charges"},
	"source_through":         {Distributed, "how far an org's sources reach, read by its dashboard"},
	"daily_spend":            {Distributed, "rollup of charges, read by the dashboard for one org"},
	"daily_spend_by":         {Distributed, "rollup of daily_spend"},
	"month_to_date_drivers":  {Distributed, "rollup of daily_spend"},
	"month_to_date_spend_by": {Distributed, "rollup of daily_spend_by"},
	"gpu_resource_daily":     {Distributed, "rollup of charges for the savings finders"},
	"llm_hourly":             {Distributed, "rollup of charges for the break-even"},
	"savings_reports":        {Distributed, "an org's stored savings report"},
	"column_mappings":        {Distributed, "an org's mapping of generic files"},
	"budgets":                {Distributed, "an org's budgets"},
	"budget_alerts":          {Distributed, "an org's budgets' crossings"},
	"gpu_price_overrides":    {Distributed, "an org's prices"},
	"llm_price_overrides":    {Distributed, "an org's prices"},
	"model_substitutes":      {Distributed, "an org's break-even tiers"},
	"scenarios":              {Distributed, "an org's saved scenarios"},
	"notification_channels":  {Distributed, "an org's alert channels"},
	"webhook_secrets":        {Distributed, "an org's webhook signing key"},
	"deliveries":             {Distributed, "an org's notification deliveries"},
	"digest_settings":        {Distributed, "an org's digest settings"},
	"digest_unsubscribes":    {Distributed, "an org's digest opt-outs"},
	"connections":            {Distributed, "an org's provider connections"},
	"upload_progress":        {Distributed, "an org's running uploads (unlogged)"},
	"dashboard_views":        {Distributed, "an org's members' last dashboard views"},

	"sessions":        {Coordinator, "looked up by cookie before any org is known; its org may be none"},
	"api_tokens":      {Coordinator, "looked up by the token's hash, unique across orgs, before its org is known"},
	"invites":         {Coordinator, "looked up by the link's hash, unique across orgs, before the invitee is a member"},
	"outbox":          {Coordinator, "account mail belongs to no org"},
	"stripe_events":   {Coordinator, "Stripe's event ids, recorded before their org is known"},
	"login_failures":  {Coordinator, "keyed by email or address, not by org"},
	"password_resets": {Coordinator, "a person's, not an org's"},
	"signups":         {Coordinator, "a sign-up waiting for its address, before any org or person exists"},
	"app_secrets":     {Coordinator, "the install's own keys"},

	"schema_migrations":  {Coordinator, "golang-migrate's version of the schema"},
	"river_job":          {Coordinator, "River's queue: every org's jobs, worked from the coordinator"},
	"river_leader":       {Coordinator, "River's"},
	"river_migration":    {Coordinator, "River's"},
	"river_notification": {Coordinator, "River's"},
	"river_queue":        {Coordinator, "River's"},
}

// distributeOrder is the order reference and distributed tables are made
// in: by name (their foreign keys are dropped meanwhile), imports first of
// the distributed, the others co-located with it.
func distributeOrder() (reference, distributed []string) {
	for table, d := range Distribution {
		switch d.Placement {
		case Reference:
			reference = append(reference, table)
		case Distributed:
			distributed = append(distributed, table)
		}
	}
	slices.Sort(reference)
	slices.Sort(distributed)
	i := slices.Index(distributed, "imports")
	distributed = append([]string{"imports"}, slices.Delete(distributed, i, i+1)...)
	return reference, distributed
}

// ErrNoCitus is Distribute on a database without the citus extension.
var ErrNoCitus = errors.New("the citus extension is not installed in this database: " +
	"load it (shared_preload_libraries = 'citus'), CREATE EXTENSION citus here and on every worker, " +
	"and add the workers (citus_add_node) first")

// distributeFKs keeps the foreign keys Distribute drops until it has made
// them again, so that a conversion stopped half-way picks up where it was.
const distributeFKs = "burnrate_distribute_fks"

// Distribute converts a migrated database on Citus, in order, each step
// skipped when done already (so it may run again, after an interruption or
// after migrations that add tables): it lets burnrate_app log in (Citus
// connects to the workers as the role a session set), drops the foreign
// keys from and to the tables it will convert (recording them first: a
// table with a foreign key to a reference table becomes a Citus-local
// table, which cannot then be distributed), makes the reference tables,
// distributes the others by org_id co-located with imports, and makes the
// foreign keys again, which turns the coordinator's tables that have one to
// a reference table into Citus-local tables. step is told each step as it
// ends, with how long it took. It refuses a table without a decision in
// Distribution.
func (s *Store) Distribute(ctx context.Context, step func(what string, took time.Duration)) error {
	var citus bool
	if err := s.q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
		return mapError("distribute", err)
	}
	if !citus {
		return fmt.Errorf("distribute: %w", ErrNoCitus)
	}
	var workers int
	if err := s.q.QueryRow(ctx, `SELECT count(*) FROM citus_get_active_worker_nodes()`).Scan(&workers); err != nil {
		return mapError("distribute: workers", err)
	}
	if workers == 0 {
		return errors.New("distribute: the cluster has no active workers: add them first (SELECT citus_add_node('host', 5432))")
	}
	tables, err := s.tables(ctx)
	if err != nil {
		return err
	}
	var undecided []string
	for _, t := range tables {
		if _, ok := Distribution[t]; !ok && t != distributeFKs {
			undecided = append(undecided, t)
		}
	}
	if len(undecided) > 0 {
		return fmt.Errorf("distribute: no distribution decision for %s (store.Distribution): this binary does not know the schema", strings.Join(undecided, ", "))
	}
	timed := func(what string, fn func() error) error {
		start := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("distribute: %s: %w", what, err)
		}
		step(what, time.Since(start))
		return nil
	}
	exec := func(sql string, args ...any) error {
		_, err := s.q.Exec(ctx, sql, args...)
		return err
	}
	if err := timed("let burnrate_app log in (Citus connects to the workers as it)", func() error {
		return exec(`ALTER ROLE burnrate_app LOGIN`)
	}); err != nil {
		return err
	}

	reference, distributed := distributeOrder()
	state, err := s.citusTables(ctx)
	if err != nil {
		return err
	}
	var pending []string
	for _, t := range append(slices.Clone(reference), distributed...) {
		if !state[t].is(Distribution[t].Placement, state[distributed[0]]) {
			pending = append(pending, t)
		}
	}
	for _, t := range pending {
		if st := state[t]; st.method == "n" && st.repmodel == "s" {
			var identity bool
			if err := s.q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_attribute WHERE attrelid = $1::regclass AND attidentity <> '')`, t).
				Scan(&identity); err != nil {
				return mapError("distribute", err)
			}
			if identity {
				return fmt.Errorf("distribute: %s became a Citus-local table (it has a foreign key to a reference table) "+
					"and has an identity column, which Citus can neither distribute nor turn back: make it again as a migration "+
					"must on a distributed database (CREATE TABLE, SELECT burnrate_distribute('%s'), then its foreign keys; "+
					"docs/operations.md, \"Distributing by org\")", t, t)
			}
		}
	}
	var recorded bool
	if err := s.q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, distributeFKs).Scan(&recorded); err != nil {
		return mapError("distribute", err)
	}
	if len(pending) == 0 && !recorded {
		step("every table is where store.Distribution says: nothing to do", 0)
		return nil
	}

	if err := timed("record the foreign keys from and to the tables to convert", func() error {
		if err := exec(`CREATE TABLE IF NOT EXISTS ` + distributeFKs + ` (table_name text, name text, definition text, PRIMARY KEY (table_name, name))`); err != nil {
			return err
		}
		return exec(`
			INSERT INTO `+distributeFKs+` (table_name, name, definition)
			SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
			FROM pg_constraint c
			WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
				AND (c.conrelid::regclass::text = ANY ($1) OR c.confrelid::regclass::text = ANY ($1))
			ON CONFLICT DO NOTHING`, pending)
	}); err != nil {
		return err
	}
	type foreignKey struct{ table, name, definition string }
	rows, err := s.q.Query(ctx, `SELECT table_name, name, definition FROM `+distributeFKs+` ORDER BY 1, 2`)
	if err != nil {
		return mapError("distribute: foreign keys", err)
	}
	fks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (foreignKey, error) {
		var fk foreignKey
		err := row.Scan(&fk.table, &fk.name, &fk.definition)
		return fk, err
	})
	if err != nil {
		return mapError("distribute: foreign keys", err)
	}
	if err := timed(fmt.Sprintf("drop %d foreign keys", len(fks)), func() error {
		for _, fk := range fks {
			if err := exec(`ALTER TABLE ` + pgx.Identifier{fk.table}.Sanitize() + ` DROP CONSTRAINT IF EXISTS ` + pgx.Identifier{fk.name}.Sanitize()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, table := range pending {
		placement := Distribution[table].Placement
		what := "reference table " + table
		if placement == Distributed {
			what = "distribute " + table + " by org_id"
		}
		if err := timed(what, func() error {
			state, err := s.citusTables(ctx)
			if err != nil {
				return err
			}
			switch t := state[table]; {
			case t.is(placement, state[distributed[0]]):
				return nil
			case t.method == "n" && t.repmodel == "s":
				// A Citus-local table, made when it had a foreign key to a
				// reference table: a plain table again first.
				if err := exec(`SELECT undistribute_table($1)`, table); err != nil {
					return err
				}
			case t.method == "h" && table != distributed[0]:
				return exec(`SELECT alter_distributed_table($1, colocate_with => $2)`, table, distributed[0])
			case t.method != "":
				return fmt.Errorf("%s is a Citus table of another kind (partition method %q): undistribute_table it first", table, t.method)
			}
			switch {
			case placement == Reference:
				return exec(`SELECT create_reference_table($1)`, table)
			case table == distributed[0]:
				return exec(`SELECT create_distributed_table($1, 'org_id')`, table)
			}
			return exec(`SELECT create_distributed_table($1, 'org_id', colocate_with => $2)`, table, distributed[0])
		}); err != nil {
			return err
		}
	}
	return timed(fmt.Sprintf("make the %d foreign keys again", len(fks)), func() error {
		for _, fk := range fks {
			var exists bool
			if err := s.q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2)`,
				fk.table, fk.name).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if err := exec(`ALTER TABLE ` + pgx.Identifier{fk.table}.Sanitize() + ` ADD CONSTRAINT ` + pgx.Identifier{fk.name}.Sanitize() + ` ` + fk.definition); err != nil {
					return fmt.Errorf("%s.%s: %w", fk.table, fk.name, err)
				}
			}
		}
		return exec(`DROP TABLE ` + distributeFKs)
	})
}

// citusTable is a table's row in pg_dist_partition; the zero value for a
// plain table.
type citusTable struct {
	method, repmodel string
	colocation       int64
}

// is reports whether t is what p says, distributed tables co-located with
// first.
func (t citusTable) is(p Placement, first citusTable) bool {
	switch p {
	case Reference:
		return t.method == "n" && t.repmodel == "t"
	case Distributed:
		return t.method == "h" && t.colocation == first.colocation
	}
	return true
}

// citusTables are the Citus tables of the database, by name.
func (s *Store) citusTables(ctx context.Context) (map[string]citusTable, error) {
	rows, err := s.q.Query(ctx, `SELECT logicalrelid::regclass::text, partmethod::text, repmodel::text, colocationid FROM pg_dist_partition`)
	if err != nil {
		return nil, mapError("citus tables", err)
	}
	out := map[string]citusTable{}
	var name string
	var t citusTable
	_, err = pgx.ForEachRow(rows, []any{&name, &t.method, &t.repmodel, &t.colocation}, func() error {
		out[name] = t
		return nil
	})
	return out, mapError("citus tables", err)
}

// tables are the tables of the public schema.
func (s *Store) tables(ctx context.Context) ([]string, error) {
	rows, err := s.q.Query(ctx, `
		SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY 1`)
	if err != nil {
		return nil, mapError("tables", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return tables, mapError("tables", err)
}

// SeenRows counts the rows of table, one of Distribution's, that s's
// connection sees, whatever their org: on a connection fenced to an org
// (Fenced), row-level security shows that org's rows only. It is for
// checking the fence from outside (scripts/citus-check), on one Postgres or
// on Citus's workers.
func (s *Store) SeenRows(ctx context.Context, table string) (int64, error) {
	if _, ok := Distribution[table]; !ok {
		return 0, fmt.Errorf("seen rows: %q is no table of Burnrate's", table)
	}
	var n int64
	err := s.q.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n)
	return n, mapError("seen rows of "+table, err)
}
