package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// UnmodelledSources are the formats whose rows may be LLM spend without a
// model: the providers' cost reports, which bill by line item (an OpenAI
// costs export grouped by project alone names none). The partial index of
// migration 000043 lists the same.
var UnmodelledSources = []string{"openai-costs", "anthropic-cost", "anthropic-console-cost"}

// UnmodelledLLMSpend is orgID's LLM spend that has no model under f, per
// day, currency and provider (in Group): the rows of UnmodelledSources
// without one. A view by model shows it apart from cloud spend, which has
// no model either (docs/data-model.md, "Spend without a model"). It reads
// daily_spend through the partial index daily_spend_unmodelled_llm: a few
// rows a day.
func (s *Store) UnmodelledLLMSpend(ctx context.Context, orgID int64, f SpendFilter) ([]DaySpend, error) {
	if f.Model != "" {
		return nil, nil
	}
	args := []any{orgID}
	where := f.where(&args)
	// The sources are literals, as the index's predicate has them, so that
	// the planner may use it.
	rows, err := s.q.Query(ctx, `
		SELECT day, currency, provider, sum(`+f.Cost.column()+`)
		FROM daily_spend
		WHERE `+where+` AND model = '' AND source IN ('openai-costs', 'anthropic-cost', 'anthropic-console-cost')
		GROUP BY 1, 2, 3
		ORDER BY 1, 2, 3`, args...)
	if err != nil {
		return nil, mapError("unmodelled llm spend", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DaySpend, error) {
		var d DaySpend
		err := row.Scan(&d.Day, &d.Currency, &d.Group, &d.Amount)
		return d, err
	})
	return out, mapError("unmodelled llm spend", err)
}
