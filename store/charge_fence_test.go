package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestWriteChargesKeepsToItsOrg: a fenced import writes its rows as the
// connecting role (COPY is refused under row-level security, and Citus
// refuses a transaction that changes an org's shards as one role and then
// reads them as another), for the rest of its own transaction only: the
// connection is fenced to its org again once the transaction ends. On a
// connection fenced to another org, WriteCharges writes nothing.
func TestWriteChargesKeepsToItsOrg(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	ours, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Ours"})
	theirs, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Theirs"})
	importRows(t, st, theirs, store.DedupeNone, charge(1, "2026-03-01 10:00", "99"))
	fencedAs := func(st *store.Store) (role string, others int) {
		t.Helper()
		if err := store.RawQueryRow(ctx, st, `SELECT current_user, (SELECT count(*) FROM charges WHERE org_id = $1)`, theirs.ID).
			Scan(&role, &others); err != nil {
			t.Fatal(err)
		}
		return role, others
	}

	for name, dedupe := range map[string]store.Dedupe{"CloudExport": store.DedupeNone, "EventLog": store.DedupeSkip, "UsageBuckets": store.DedupeReplace} {
		t.Run(name, func(t *testing.T) {
			err := st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
				err := fenced.InTx(ctx, func(tx *store.Store) error {
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
					if role, _ := fencedAs(tx); role == "burnrate_app" {
						t.Errorf("after WriteCharges in the import's transaction: role %q, want the connecting role", role)
					}
					return nil
				})
				if err != nil {
					return err
				}
				if role, others := fencedAs(fenced); role != "burnrate_app" || others != 0 {
					t.Errorf("after the import's transaction: role %q, %d of another org's charges visible; want burnrate_app and 0", role, others)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}

	err := st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
		return fenced.InTx(ctx, func(tx *store.Store) error {
			_, err := tx.WriteCharges(ctx, theirs.ID, 1, time.UTC, store.DedupeNone, &sliceSource{rows: []store.Charge{charge(1, "2026-03-03 10:00", "5")}})
			if want := fmt.Sprintf("fenced to org %d, not %d", ours.ID, theirs.ID); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("WriteCharges for another org: %v, want %q", err, want)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := totals(t, st, theirs.ID); c.String() != "99" {
		t.Errorf("the other org's charges: %s, want 99", c)
	}
}
