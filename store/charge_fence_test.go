package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestWriteChargesStaysFenced checks that a fenced import leaves the
// connecting role only for its COPY: the statements after it in the same
// transaction are again confined to the org by row-level security.
func TestWriteChargesStaysFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	ours, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Ours"})
	theirs, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Theirs"})
	importRows(t, st, theirs, store.DedupeNone, charge(1, "2026-03-01 10:00", "99"))

	for name, dedupe := range map[string]store.Dedupe{"CloudExport": store.DedupeNone, "EventLog": store.DedupeSkip, "UsageBuckets": store.DedupeReplace} {
		t.Run(name, func(t *testing.T) {
			err := st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
				return fenced.InTx(ctx, func(tx *store.Store) error {
					imp, err := tx.CreateImport(ctx, store.NewImport{OrgID: ours.ID, FileName: name + ".csv", SHA256: []byte(name), Via: "test"})
					if err != nil {
						return err
					}
					defer tx.EndImport(ctx, ours.ID, imp.ID)
					row := charge(1, "2026-03-02 10:00", "1", func(c *store.Charge) { c.DedupeKey = fmt.Sprint(name, "-1") })
					if dedupe == store.DedupeNone {
						row.DedupeKey = ""
					}
					if _, err := tx.WriteCharges(ctx, ours.ID, imp.ID, time.UTC, dedupe, &sliceSource{rows: []store.Charge{row}}); err != nil {
						return err
					}
					var role string
					var others int
					if err := store.RawQueryRow(ctx, tx, `SELECT current_user`).Scan(&role); err != nil {
						return err
					}
					if err := store.RawQueryRow(ctx, tx, `SELECT count(*) FROM charges WHERE org_id = $1`, theirs.ID).Scan(&others); err != nil {
						return err
					}
					if role != "burnrate_app" || others != 0 {
						t.Errorf("after WriteCharges in the import's transaction: role %q, %d of another org's charges visible; want burnrate_app and 0", role, others)
					}
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
