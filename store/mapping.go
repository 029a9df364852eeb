package store

import (
	"context"
	"encoding/json"
)

// ColumnMapping is an org's saved mapping of a CSV's columns onto charges,
// for files in no known format. It mirrors ingest.Mapping; the store keeps
// it as JSON so that it needs no schema change when the mapping grows.
type ColumnMapping struct {
	Date            string   `json:"date"`
	Cost            string   `json:"cost"`
	Currency        string   `json:"currency,omitempty"`
	Service         string   `json:"service,omitempty"`
	Account         string   `json:"account,omitempty"`
	Provider        string   `json:"provider,omitempty"`
	Tags            []string `json:"tags,omitempty"`
	DateFormat      string   `json:"date_format,omitempty"`
	DefaultCurrency string   `json:"default_currency,omitempty"`
	// DecimalSeparator is "," for amounts written 1.234,56; empty for 1,234.56.
	DecimalSeparator string `json:"decimal_separator,omitempty"`
}

// ColumnMapping returns orgID's saved mapping. Returns ErrNotFound if it has
// none.
func (s *Store) ColumnMapping(ctx context.Context, orgID int64) (ColumnMapping, error) {
	var raw []byte
	if err := s.q.QueryRow(ctx, `SELECT mapping FROM column_mappings WHERE org_id = $1`, orgID).Scan(&raw); err != nil {
		return ColumnMapping{}, mapError("get column mapping", err)
	}
	var m ColumnMapping
	err := json.Unmarshal(raw, &m)
	return m, mapError("get column mapping", err)
}

// SaveColumnMapping stores orgID's mapping, replacing any earlier one.
func (s *Store) SaveColumnMapping(ctx context.Context, orgID int64, m ColumnMapping) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = s.q.Exec(ctx, `
		INSERT INTO column_mappings (org_id, mapping, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (org_id) DO UPDATE SET mapping = EXCLUDED.mapping, updated_at = EXCLUDED.updated_at`, orgID, raw)
	return mapError("save column mapping", err)
}
