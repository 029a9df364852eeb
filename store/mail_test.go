package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestOutboxIsFenced: a request fenced to an org lists and queues only that
// org's mail, and never sees account mail.
func TestOutboxIsFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, _ := storetest.Org(t, st, storetest.OrgOpts{})
	b, _ := storetest.Org(t, st, storetest.OrgOpts{})
	queue := func(s *store.Store, orgID int64, subject string) (store.OutboxMail, error) {
		return s.CreateOutboxMail(ctx, store.NewOutboxMail{OrgID: orgID, Kind: "test", To: []string{"x@example.com"}, Subject: subject, Message: []byte(`{}`)})
	}
	for _, m := range []struct {
		org     int64
		subject string
	}{{a.ID, "a"}, {b.ID, "b"}, {0, "account"}} {
		if _, err := queue(st, m.org, m.subject); err != nil {
			t.Fatal(err)
		}
	}
	err := st.Fenced(ctx, a.ID, 0, func(f *store.Store) error {
		for _, org := range []int64{a.ID, b.ID} {
			ms, err := f.OutboxMails(ctx, org, 10)
			if err != nil {
				return err
			}
			if want := map[int64]int{a.ID: 1, b.ID: 0}[org]; len(ms) != want {
				t.Errorf("fenced to org A, org %d's outbox has %d mails, want %d", org, len(ms), want)
			}
		}
		if _, _, err := f.OutboxMessage(ctx, 0, 3); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("fenced read of account mail: %v, want not found", err)
		}
		if _, err := queue(f, a.ID, "a2"); err != nil {
			t.Errorf("fenced to org A, queueing A's mail: %v", err)
		}
		if _, err := queue(f, b.ID, "b2"); err == nil {
			t.Error("fenced to org A, queued mail for org B")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPasswordReset: a token works once, within its hour; using it sets the
// password, ends every session and uses up the user's other links.
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, u := storetest.Org(t, st, storetest.OrgOpts{})
	if _, _, err := st.CreateSession(ctx, u.ID, org.ID, "a"); err != nil {
		t.Fatal(err)
	}
	first, err := st.CreatePasswordReset(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.CreatePasswordReset(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.PasswordResetUser(ctx, first); err != nil || got.ID != u.ID {
		t.Fatalf("open token's user = %v, %v", got.ID, err)
	}
	if _, err := st.PasswordResetUser(ctx, "not-a-token"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
	got, err := st.ResetPassword(ctx, first, "new-hash")
	if err != nil || got.ID != u.ID || got.PasswordHash != "new-hash" {
		t.Fatalf("reset: %+v, %v", got, err)
	}
	var sessions int
	if err := storetest.Pool(st).QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1`, u.ID).Scan(&sessions); err != nil || sessions != 0 {
		t.Fatalf("%d sessions left after a reset (%v)", sessions, err)
	}
	for _, tok := range []string{first, second} {
		if _, err := st.ResetPassword(ctx, tok, "again"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a used-up token reset the password again: %v", err)
		}
	}

	expired, err := st.CreatePasswordReset(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storetest.Pool(st).Exec(ctx, `UPDATE password_resets SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ResetPassword(ctx, expired, "late"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired token: %v", err)
	}
	if n, err := st.DeleteExpiredPasswordResets(ctx); err != nil || n != 1 {
		t.Fatalf("deleted %d expired resets (%v), want 1", n, err)
	}
}
