package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestFencedHidesOtherOrgs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	orgA, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "A"})
	orgB, ownerB := storetest.Org(t, st, storetest.OrgOpts{Name: "B"})
	if _, _, err := st.CreateAPIToken(ctx, orgB.ID, "b's token", ownerB.ID); err != nil {
		t.Fatal(err)
	}

	err := st.Fenced(ctx, orgA.ID, 0, func(fenced *store.Store) error {
		// Even a query that asks for org B by id gets nothing back.
		if _, err := fenced.Org(ctx, orgB.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Org(B) fenced to A: err = %v, want ErrNotFound", err)
		}
		toks, err := fenced.APITokens(ctx, orgB.ID)
		if err != nil {
			return err
		}
		if len(toks) != 0 {
			t.Errorf("APITokens(B) fenced to A = %d rows, want 0", len(toks))
		}
		// Writing into another org is refused by the policy, not just hidden.
		if _, _, err := fenced.CreateAPIToken(ctx, orgB.ID, "sneaky", 0); err == nil {
			t.Error("CreateAPIToken(B) fenced to A succeeded")
		}
		if _, err := fenced.Org(ctx, orgA.ID); err != nil {
			t.Errorf("Org(A) fenced to A: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The connection went back to the pool unfenced.
	for range 5 {
		if _, err := st.Org(ctx, orgB.ID); err != nil {
			t.Fatalf("after Fenced, Org(B): %v", err)
		}
	}
}

func TestVisitByCookie(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	viewer := storetest.Member(t, st, org, access.Viewer)
	loner := storetest.User(t, st, storetest.UserOpts{})

	_, lonerCookie, err := st.CreateSession(ctx, loner.ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.VisitByCookie(ctx, lonerCookie)
	if err != nil || v.User.ID != loner.ID || v.Session.UserID != loner.ID || v.Org != nil || v.Role != "" {
		t.Fatalf("VisitByCookie(no org) = %+v, %v; want the user, no org and no role", v, err)
	}
	for _, bad := range []string{"", "x", lonerCookie + "x", "1.abc", "abc.def"} {
		if _, err := st.VisitByCookie(ctx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VisitByCookie(%q) err = %v, want ErrNotFound", bad, err)
		}
	}

	sess, viewerCookie, err := st.CreateSession(ctx, viewer.ID, org.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err = st.VisitByCookie(ctx, viewerCookie)
	if err != nil || v.User.ID != viewer.ID || v.Org == nil || v.Org.ID != org.ID || v.Org.Slug != org.Slug || v.Role != access.Viewer {
		t.Fatalf("VisitByCookie(member) = %+v, %v; want the org and the viewer role", v, err)
	}
	// Another user's org in the session (it cannot be set so, but a
	// membership can go): no org.
	if _, _, err := st.RemoveMember(ctx, org.ID, viewer.ID, func(store.Member) error { return nil }); err != nil {
		t.Fatal(err)
	}
	v, err = st.VisitByCookie(ctx, viewerCookie)
	if err != nil || v.User.ID != viewer.ID || v.Session.OrgID != org.ID || v.Org != nil || v.Role != "" {
		t.Fatalf("VisitByCookie(removed member) = %+v, %v; want the user, no org and no role", v, err)
	}

	if _, err := st.Pool().Exec(ctx, `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.VisitByCookie(ctx, viewerCookie); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("VisitByCookie(expired) err = %v, want ErrNotFound", err)
	}
	_, ownerCookie, err := st.CreateSession(ctx, owner.ID, org.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := st.VisitByCookie(ctx, ownerCookie); err != nil || v.Role != access.Owner || v.Org == nil {
		t.Errorf("VisitByCookie(owner) = %+v, %v; want the org and the owner role", v, err)
	}
}

func TestSlugify(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Acme Corp":      "acme-corp",
		"  --ML Team!! ": "ml-team",
		"Ünïcode":        "n-code",
		"":               "org",
		"日本":             "org",
	} {
		if got := store.Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFencedUserSeesOwnOrgsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	orgA, ann := storetest.Org(t, st, storetest.OrgOpts{Name: "A"})
	orgB, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "B", Owner: &ann})
	storetest.Org(t, st, storetest.OrgOpts{Name: "Stranger"})
	err := st.Fenced(ctx, orgA.ID, ann.ID, func(fenced *store.Store) error {
		orgs, err := fenced.OrgsForUser(ctx, ann.ID)
		if err != nil {
			return err
		}
		if len(orgs) != 2 || orgs[0].ID != orgA.ID || orgs[1].ID != orgB.ID {
			t.Errorf("OrgsForUser fenced = %+v, want A and B", orgs)
		}
		// B is readable for the switcher, but not writable from A.
		if _, err := fenced.UpdateOrg(ctx, orgB.ID, store.OrgUpdate{Name: "x", TimeZone: "UTC", Currency: "USD", TeamTagKey: "team"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdateOrg(B) fenced to A: err = %v, want ErrNotFound", err)
		}
		// B's members stay hidden: only Ann's own membership there shows.
		ms, err := fenced.Members(ctx, orgB.ID)
		if err != nil {
			return err
		}
		if len(ms) != 1 || ms[0].UserID != ann.ID {
			t.Errorf("Members(B) fenced to A = %+v, want only Ann's own", ms)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
