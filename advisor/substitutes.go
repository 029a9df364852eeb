package advisor

import (
	"context"
	"maps"

	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
)

// The org's tier table: the shipped one (pricing/data/model_tiers.csv)
// with the org's saved edits on top (docs/advisor.md, "Fair break-even").
// Break-even on every face (page, API, CLI) and the digest's hint read
// it through OrgSubstitutes; a request's own substitutes win over both.

// OrgSubstitutes returns orgID's saved tier table edits, keyed as
// pricing.CheckSubstitutes keys them (empty when st is nil: no org).
func OrgSubstitutes(ctx context.Context, st *store.Store, orgID int64) (map[string]string, error) {
	out := map[string]string{}
	if st == nil || orgID == 0 {
		return out, nil
	}
	rows, err := st.ModelSubstitutes(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.APIModel] = r.OpenModel
	}
	return out, nil
}

// SaveSubstitutes replaces orgID's tier table edits with text, written as
// ParseSubstitutes reads it ("gpt-4o=qwen2.5-72b, claude-sonnet-4=none");
// empty text resets the org to the shipped table. An unknown open model is
// an InputError naming the field.
func SaveSubstitutes(ctx context.Context, st *store.Store, orgID, userID int64, text string) (map[string]string, error) {
	subs, err := ParseSubstitutes(text)
	if err != nil {
		return nil, err
	}
	checked, err := pricing.CheckSubstitutes(subs)
	if err != nil {
		return nil, asInputError(prefixed("substitutes", err))
	}
	if err := st.SetModelSubstitutes(ctx, orgID, userID, checked); err != nil {
		return nil, err
	}
	return checked, nil
}

// withOrgSubstitutes is the request's substitutes over the org's saved ones.
func withOrgSubstitutes(saved, asked map[string]string) (map[string]string, error) {
	if len(saved) == 0 {
		return asked, nil
	}
	out := maps.Clone(saved)
	checked, err := pricing.CheckSubstitutes(asked)
	if err != nil {
		return nil, asInputError(prefixed("substitutes", err))
	}
	maps.Copy(out, checked)
	return out, nil
}

func prefixed(field string, err error) error {
	return BadInput("%s: %v", field, err)
}
