package store

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// GPUPriceOverride is an org's own price for one provider's instance type (a
// negotiated rate, say). It takes precedence over the shipped catalog.
type GPUPriceOverride struct {
	OrgID        int64
	ID           int64
	Provider     string // lower case: aws, gcp, azure, lambda, …
	InstanceType string
	GPU          string           // empty: the catalog's
	GPUCount     decimal.Decimal  // zero: the catalog's
	OnDemand     *decimal.Decimal // USD per instance-hour; nil when none
	Spot         *decimal.Decimal // USD per instance-hour; nil when none
	Note         string
	UpdatedBy    int64
	UpdatedEmail string
	UpdatedAt    time.Time
}

// GPUPriceOverrideInput is a GPU override row to write. At least one of
// OnDemand and Spot must be set (the table checks it).
type GPUPriceOverrideInput struct {
	Provider     string
	InstanceType string
	GPU          string
	GPUCount     decimal.Decimal
	OnDemand     *decimal.Decimal
	Spot         *decimal.Decimal
	Note         string
}

const gpuOverrideColumns = `o.org_id, o.id, o.provider, o.instance_type, o.gpu, o.gpu_count, o.price_on_demand,
	o.price_spot, o.note, coalesce(o.updated_by, 0), coalesce(u.email, ''), o.updated_at`

const gpuOverrideFrom = ` FROM gpu_price_overrides o LEFT JOIN users u ON u.id = o.updated_by `

func scanGPUPriceOverride(row pgx.Row) (GPUPriceOverride, error) {
	var o GPUPriceOverride
	err := row.Scan(&o.OrgID, &o.ID, &o.Provider, &o.InstanceType, &o.GPU, &o.GPUCount, &o.OnDemand,
		&o.Spot, &o.Note, &o.UpdatedBy, &o.UpdatedEmail, &o.UpdatedAt)
	return o, err
}

// GPUPriceOverrides lists orgID's GPU overrides by provider and instance type.
func (s *Store) GPUPriceOverrides(ctx context.Context, orgID int64) ([]GPUPriceOverride, error) {
	rows, err := s.q.Query(ctx, `SELECT `+gpuOverrideColumns+gpuOverrideFrom+`
		WHERE o.org_id = $1 ORDER BY o.provider, lower(o.instance_type)`, orgID)
	if err != nil {
		return nil, mapError("list gpu price overrides", err)
	}
	os, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (GPUPriceOverride, error) { return scanGPUPriceOverride(row) })
	return os, mapError("list gpu price overrides", err)
}

// GPUPriceOverride returns one of orgID's GPU overrides. Returns ErrNotFound
// if there is none.
func (s *Store) GPUPriceOverride(ctx context.Context, orgID, id int64) (GPUPriceOverride, error) {
	o, err := scanGPUPriceOverride(s.q.QueryRow(ctx, `SELECT `+gpuOverrideColumns+gpuOverrideFrom+`
		WHERE o.org_id = $1 AND o.id = $2`, orgID, id))
	return o, mapError("get gpu price override", err)
}

// UpsertGPUPriceOverrides writes rows for orgID in one transaction: a row for
// a provider and instance type orgID already overrides replaces it, others
// are added. It returns how many rows were written.
func (s *Store) UpsertGPUPriceOverrides(ctx context.Context, orgID, userID int64, in []GPUPriceOverrideInput) (int, error) {
	err := s.InTx(ctx, func(tx *Store) error {
		b := &pgx.Batch{}
		for _, o := range in {
			b.Queue(`
				INSERT INTO gpu_price_overrides (org_id, provider, instance_type, gpu, gpu_count, price_on_demand, price_spot, note, updated_by, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULLIF($9, 0), now())
				ON CONFLICT (org_id, provider, lower(instance_type)) DO UPDATE SET
					instance_type = EXCLUDED.instance_type, gpu = EXCLUDED.gpu, gpu_count = EXCLUDED.gpu_count,
					price_on_demand = EXCLUDED.price_on_demand, price_spot = EXCLUDED.price_spot,
					note = EXCLUDED.note, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`,
				orgID, strings.ToLower(strings.TrimSpace(o.Provider)), strings.TrimSpace(o.InstanceType), o.GPU, o.GPUCount,
				o.OnDemand, o.Spot, o.Note, userID)
		}
		return tx.q.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return 0, mapError("upsert gpu price overrides", err)
	}
	return len(in), nil
}

// UpdateGPUPriceOverride changes the prices and note of one of orgID's GPU
// overrides. Returns ErrNotFound if there is none.
func (s *Store) UpdateGPUPriceOverride(ctx context.Context, orgID, id, userID int64, onDemand, spot *decimal.Decimal, note string) (GPUPriceOverride, error) {
	tag, err := s.q.Exec(ctx, `
		UPDATE gpu_price_overrides SET price_on_demand = $3, price_spot = $4, note = $5, updated_by = NULLIF($6, 0), updated_at = now()
		WHERE org_id = $1 AND id = $2`, orgID, id, onDemand, spot, note, userID)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return GPUPriceOverride{}, mapError("update gpu price override", err)
	}
	return s.GPUPriceOverride(ctx, orgID, id)
}

// DeleteGPUPriceOverride removes one of orgID's GPU overrides, so the catalog
// price applies again. Returns ErrNotFound if there is none.
func (s *Store) DeleteGPUPriceOverride(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM gpu_price_overrides WHERE org_id = $1 AND id = $2`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("delete gpu price override", err)
}

// LLMPriceOverride is an org's own price for one LLM API model, in USD per
// 1M tokens. It takes precedence over the shipped price table.
type LLMPriceOverride struct {
	OrgID        int64
	ID           int64
	Model        string
	Provider     string
	Input        decimal.Decimal
	Output       decimal.Decimal
	CachedInput  *decimal.Decimal // nil: cached reads cost the input price
	Note         string
	UpdatedBy    int64
	UpdatedEmail string
	UpdatedAt    time.Time
}

// LLMPriceOverrideInput is an LLM override row to write.
type LLMPriceOverrideInput struct {
	Model       string
	Provider    string
	Input       decimal.Decimal
	Output      decimal.Decimal
	CachedInput *decimal.Decimal
	Note        string
}

const llmOverrideColumns = `o.org_id, o.id, o.model, o.provider, o.input_per_mtok, o.output_per_mtok,
	o.cached_input_per_mtok, o.note, coalesce(o.updated_by, 0), coalesce(u.email, ''), o.updated_at`

const llmOverrideFrom = ` FROM llm_price_overrides o LEFT JOIN users u ON u.id = o.updated_by `

func scanLLMPriceOverride(row pgx.Row) (LLMPriceOverride, error) {
	var o LLMPriceOverride
	err := row.Scan(&o.OrgID, &o.ID, &o.Model, &o.Provider, &o.Input, &o.Output, &o.CachedInput, &o.Note,
		&o.UpdatedBy, &o.UpdatedEmail, &o.UpdatedAt)
	return o, err
}

// LLMPriceOverrides lists orgID's LLM overrides by model.
func (s *Store) LLMPriceOverrides(ctx context.Context, orgID int64) ([]LLMPriceOverride, error) {
	rows, err := s.q.Query(ctx, `SELECT `+llmOverrideColumns+llmOverrideFrom+`
		WHERE o.org_id = $1 ORDER BY lower(o.model)`, orgID)
	if err != nil {
		return nil, mapError("list llm price overrides", err)
	}
	os, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LLMPriceOverride, error) { return scanLLMPriceOverride(row) })
	return os, mapError("list llm price overrides", err)
}

// LLMPriceOverride returns one of orgID's LLM overrides. Returns ErrNotFound
// if there is none.
func (s *Store) LLMPriceOverride(ctx context.Context, orgID, id int64) (LLMPriceOverride, error) {
	o, err := scanLLMPriceOverride(s.q.QueryRow(ctx, `SELECT `+llmOverrideColumns+llmOverrideFrom+`
		WHERE o.org_id = $1 AND o.id = $2`, orgID, id))
	return o, mapError("get llm price override", err)
}

// UpsertLLMPriceOverride adds orgID's price for a model, or replaces the one
// it has (model names compare case-insensitively).
func (s *Store) UpsertLLMPriceOverride(ctx context.Context, orgID, userID int64, in LLMPriceOverrideInput) (LLMPriceOverride, error) {
	var id int64
	err := s.q.QueryRow(ctx, `
		INSERT INTO llm_price_overrides (org_id, model, provider, input_per_mtok, output_per_mtok, cached_input_per_mtok, note, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, 0), now())
		ON CONFLICT (org_id, lower(model)) DO UPDATE SET
			model = EXCLUDED.model, provider = EXCLUDED.provider, input_per_mtok = EXCLUDED.input_per_mtok,
			output_per_mtok = EXCLUDED.output_per_mtok, cached_input_per_mtok = EXCLUDED.cached_input_per_mtok,
			note = EXCLUDED.note, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at
		RETURNING id`,
		orgID, strings.TrimSpace(in.Model), strings.ToLower(strings.TrimSpace(in.Provider)), in.Input, in.Output, in.CachedInput, in.Note, userID).Scan(&id)
	if err != nil {
		return LLMPriceOverride{}, mapError("upsert llm price override", err)
	}
	return s.LLMPriceOverride(ctx, orgID, id)
}

// UpdateLLMPriceOverride changes one of orgID's LLM overrides (model name
// included). Returns ErrNotFound if there is none, ErrConflict if the new
// name is another override's.
func (s *Store) UpdateLLMPriceOverride(ctx context.Context, orgID, id, userID int64, in LLMPriceOverrideInput) (LLMPriceOverride, error) {
	tag, err := s.q.Exec(ctx, `
		UPDATE llm_price_overrides SET model = $3, provider = $4, input_per_mtok = $5, output_per_mtok = $6,
			cached_input_per_mtok = $7, note = $8, updated_by = NULLIF($9, 0), updated_at = now()
		WHERE org_id = $1 AND id = $2`,
		orgID, id, strings.TrimSpace(in.Model), strings.ToLower(strings.TrimSpace(in.Provider)), in.Input, in.Output, in.CachedInput, in.Note, userID)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return LLMPriceOverride{}, mapError("update llm price override", err)
	}
	return s.LLMPriceOverride(ctx, orgID, id)
}

// DeleteLLMPriceOverride removes one of orgID's LLM overrides. Returns
// ErrNotFound if there is none.
func (s *Store) DeleteLLMPriceOverride(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM llm_price_overrides WHERE org_id = $1 AND id = $2`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("delete llm price override", err)
}
