package freshness_test

import (
	"context"
	"testing"
	"time"

	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/store/storetest"
)

// BenchmarkLoad reads how fresh an org is that pulled two connections four
// times a day for a year and uploaded a CUR a day (4,285 imports, 8,570
// extents): what every dashboard request, budgets page and digest adds.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	st := storetest.New(b)
	org, _ := storetest.Org(b, st, storetest.OrgOpts{})
	_, err := st.Pool().Exec(ctx, `
		WITH i AS (
			INSERT INTO imports (org_id, file_name, sha256, size_bytes, source, status, via, connection_id, finished_at)
			SELECT $1, 'f' || g, decode(md5(g::text), 'hex'), 1,
			       (ARRAY['openai-costs', 'anthropic-cost', 'aws-cur'])[1 + g % 3], 'succeeded', 'test',
			       CASE WHEN g % 3 < 2 THEN 1 + g % 3 END, now()
			FROM generate_series(1, 4285) g
			RETURNING id, source
		)
		INSERT INTO import_extents (org_id, import_id, provider, billing_account, first_day, last_day, data_through)
		SELECT $1, i.id, p, a, current_date - 30, current_date, now() - (i.id % 500) * interval '1 hour'
		FROM i, (VALUES ('AWS', '111'), ('AWS', '222')) x (p, a)`, org.ID)
	if err != nil {
		b.Fatal(err)
	}
	// As the imports would have kept it (migration 000044's backfill).
	if _, err := st.Pool().Exec(ctx, `
		INSERT INTO source_through (org_id, source, provider, billing_account, connection_id, data_through, last_import, first_day, last_day)
		SELECT e.org_id, i.source, e.provider, e.billing_account, coalesce(i.connection_id, 0),
		       max(e.data_through), coalesce(max(i.finished_at), max(i.created_at)), min(e.first_day), max(e.last_day)
		FROM import_extents e JOIN imports i ON i.org_id = e.org_id AND i.id = e.import_id
		WHERE e.org_id = $1 AND i.status = 'succeeded'
		GROUP BY 1, 2, 3, 4, 5`, org.ID); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ResetTimer()
	for b.Loop() {
		if _, err := freshness.Load(ctx, st, org, now); err != nil {
			b.Fatal(err)
		}
	}
}
