package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// A token finds its org in one read, and is marked used at most once a
// minute: a script polling every second writes nothing on most requests.
func TestAPITokenBySecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	storetest.Org(t, st, storetest.OrgOpts{Name: "Other"})
	tok, secret, err := st.CreateAPIToken(ctx, org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		var at *time.Time
		if err := storetest.Pool(st).QueryRow(ctx, `SELECT last_used_at FROM api_tokens WHERE id = $1`, tok.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}

	got, gotOrg, err := st.APITokenBySecret(ctx, secret)
	if err != nil || got.ID != tok.ID || got.OrgID != org.ID || gotOrg.ID != org.ID || gotOrg.Slug != org.Slug {
		t.Fatalf("APITokenBySecret = %+v, %+v, %v; want token %d of org %d", got, gotOrg, err, tok.ID, org.ID)
	}
	first := lastUsed()
	if first == nil {
		t.Fatal("first use: last_used_at not set")
	}
	if _, _, err := st.APITokenBySecret(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if again := lastUsed(); again == nil || !again.Equal(*first) {
		t.Errorf("used again within the minute: last_used_at %v, want %v kept", again, first)
	}
	if _, err := storetest.Pool(st).Exec(ctx, `UPDATE api_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, tok.ID); err != nil {
		t.Fatal(err)
	}
	stale := lastUsed()
	if _, _, err := st.APITokenBySecret(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if now := lastUsed(); now == nil || !now.After(*stale) {
		t.Errorf("used two minutes after the last use: last_used_at %v, want later than %v", now, stale)
	}

	for _, bad := range []string{"", "brt_nope", secret + "x"} {
		if _, _, err := st.APITokenBySecret(ctx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("APITokenBySecret(%q) err = %v, want ErrNotFound", bad, err)
		}
	}
	if err := st.RevokeAPIToken(ctx, org.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.APITokenBySecret(ctx, secret); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked: err = %v, want ErrNotFound", err)
	}
}

// TestAPITokenActsAsItsMakerNow: a token carries its maker's role as it is
// now, not as it was when made, and stops working when they are no longer
// a member, even with the token itself never revoked.
func TestAPITokenActsAsItsMakerNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	admin := storetest.Member(t, st, org, access.Admin)
	_, secret, err := st.CreateAPIToken(ctx, org.ID, "ci", admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	role := func() access.Role {
		t.Helper()
		tok, _, err := st.APITokenBySecret(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return tok.Role
	}
	if r := role(); r != access.Admin {
		t.Fatalf("made by an admin: role %q", r)
	}
	if _, err := storetest.Pool(st).Exec(ctx, `UPDATE memberships SET role = 'viewer' WHERE org_id = $1 AND user_id = $2`, org.ID, admin.ID); err != nil {
		t.Fatal(err)
	}
	if r := role(); r != access.Viewer {
		t.Fatalf("maker demoted to viewer: role %q", r)
	}
	// Their membership gone without the tokens being revoked (the store's
	// RemoveMember revokes them too): the token dies with it.
	if _, err := storetest.Pool(st).Exec(ctx, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, org.ID, admin.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.APITokenBySecret(ctx, secret); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("maker no longer a member: %v, want ErrNotFound", err)
	}
}
