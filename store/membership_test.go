package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestOwnersRemovedAtOnceLeaveAnOwner removes, or demotes, an org's two
// owners at the same moment, many times: exactly one change goes through
// and the other is refused with ErrLastOwner.
func TestOwnersRemovedAtOnceLeaveAnOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	for round := range 40 {
		org, ann := storetest.Org(t, st, storetest.OrgOpts{})
		bob := storetest.Member(t, st, org, store.RoleOwner)
		remove := round%2 == 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i, u := range []store.User{ann, bob} {
			wg.Go(func() {
				<-start
				// Each change runs fenced, as a request does.
				errs[i] = st.Fenced(ctx, org.ID, u.ID, func(fenced *store.Store) error {
					if remove {
						_, err := fenced.RemoveMember(ctx, org.ID, u.ID, nil)
						return err
					}
					_, err := fenced.SetMemberRole(ctx, org.ID, u.ID, store.RoleAdmin, nil)
					return err
				})
			})
		}
		close(start)
		wg.Wait()
		if n, err := st.OwnerCount(ctx, org.ID); err != nil || n != 1 {
			t.Fatalf("round %d (remove %v): %d owners (%v), want 1; errors %v", round, remove, n, err, errs)
		}
		refused := 0
		for _, err := range errs {
			switch {
			case errors.Is(err, store.ErrLastOwner):
				refused++
			case err != nil:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if refused != 1 {
			t.Fatalf("round %d (remove %v): %d refused with ErrLastOwner, want 1", round, remove, refused)
		}
	}
}

func TestMemberChangeAllowSeesMemberAndCanRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	viewer := storetest.Member(t, st, org, store.RoleViewer)
	errNo := errors.New("no")
	var seen store.Role
	if _, err := st.SetMemberRole(ctx, org.ID, viewer.ID, store.RoleAdmin, func(m store.Member) error { seen = m.Role; return errNo }); !errors.Is(err, errNo) {
		t.Fatalf("refused change: err = %v, want allow's own error", err)
	}
	if m, _ := st.Membership(ctx, org.ID, viewer.ID); seen != store.RoleViewer || m.Role != store.RoleViewer {
		t.Fatalf("allow saw %q; role after refusal %q; want viewer, unchanged", seen, m.Role)
	}
	if _, err := st.RemoveMember(ctx, org.ID, 1<<40, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("removing a stranger: %v, want ErrNotFound", err)
	}
}
