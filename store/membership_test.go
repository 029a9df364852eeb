package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/burnrate/burnrate/access"
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
		bob := storetest.Member(t, st, org, access.Owner)
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
						_, _, err := fenced.RemoveMember(ctx, org.ID, u.ID, nil)
						return err
					}
					_, err := fenced.SetMemberRole(ctx, org.ID, u.ID, access.Admin, nil)
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
	viewer := storetest.Member(t, st, org, access.Viewer)
	errNo := errors.New("no")
	var seen access.Role
	if _, err := st.SetMemberRole(ctx, org.ID, viewer.ID, access.Admin, func(m store.Member) error { seen = m.Role; return errNo }); !errors.Is(err, errNo) {
		t.Fatalf("refused change: err = %v, want allow's own error", err)
	}
	if m, _ := st.Membership(ctx, org.ID, viewer.ID); seen != access.Viewer || m.Role != access.Viewer {
		t.Fatalf("allow saw %q; role after refusal %q; want viewer, unchanged", seen, m.Role)
	}
	if _, _, err := st.RemoveMember(ctx, org.ID, 1<<40, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("removing a stranger: %v, want ErrNotFound", err)
	}
}

// TestRemoveMemberRevokesTokensWithTheRemoval checks that tokens go with
// their creator's membership, and only then: a refused removal keeps them.
func TestRemoveMemberRevokesTokensWithTheRemoval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	admin := storetest.Member(t, st, org, access.Admin)
	for _, u := range []store.User{owner, owner, admin} {
		if _, _, err := st.CreateAPIToken(ctx, org.ID, "t", u.ID); err != nil {
			t.Fatal(err)
		}
	}
	live := func() map[int64]int {
		toks, err := st.APITokens(ctx, org.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := map[int64]int{}
		for _, tok := range toks {
			if tok.RevokedAt == nil {
				n[tok.CreatedBy]++
			}
		}
		return n
	}
	if _, _, err := st.RemoveMember(ctx, org.ID, owner.ID, nil); !errors.Is(err, store.ErrLastOwner) {
		t.Fatalf("removing the last owner: %v, want ErrLastOwner", err)
	}
	if n := live(); n[owner.ID] != 2 || n[admin.ID] != 1 {
		t.Fatalf("after a refused removal, live tokens by creator = %v", n)
	}
	m, revoked, err := st.RemoveMember(ctx, org.ID, admin.ID, nil)
	if err != nil || revoked != 1 || m.Email != admin.Email {
		t.Fatalf("RemoveMember(admin) = %+v, %d, %v; want admin's membership, 1 token", m, revoked, err)
	}
	if n := live(); n[owner.ID] != 2 || n[admin.ID] != 0 {
		t.Fatalf("after removing the admin, live tokens by creator = %v", n)
	}
}
