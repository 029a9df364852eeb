package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestNotificationChannelsAndDeliveriesAreFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	orgA, ownerA := storetest.Org(t, st, storetest.OrgOpts{})
	orgB, ownerB := storetest.Org(t, st, storetest.OrgOpts{})
	chB, err := st.SetNotificationChannel(ctx, orgB.ID, 0, store.ChannelSlack, "https://hooks.slack.com/services/B", "https://hooks.slack.com/…/es/B", ownerB.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateWebhookSecret(ctx, orgB.ID, "brwh_b"); err != nil {
		t.Fatal(err)
	}
	dB, created, err := st.RecordDelivery(ctx, orgB.ID, store.NewDelivery{Kind: "test", Channel: "slack", ChannelID: chB.ID, Target: "x", Subject: "s", DedupeKey: "k", Body: []byte(`{}`)})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	budA, err := st.CreateBudget(ctx, orgA.ID, ownerA.ID, store.BudgetInput{Name: "A", Amount: decimal.NewFromInt(1), Currency: "USD", Period: "monthly", Thresholds: []int{100}})
	if err != nil {
		t.Fatal(err)
	}

	// By org id: another org's rows are not found.
	if _, err := st.NotificationChannel(ctx, orgA.ID, chB.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("NotificationChannel(A, B's id) = %v", err)
	}
	if err := st.DeleteNotificationChannel(ctx, orgA.ID, chB.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteNotificationChannel(A, B's id) = %v", err)
	}
	if _, err := st.Delivery(ctx, orgA.ID, dB.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delivery(A, B's id) = %v", err)
	}
	if _, _, err := st.ClaimDelivery(ctx, orgA.ID, dB.ID, time.Minute); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ClaimDelivery(A, B's id) = %v", err)
	}
	// A budget channel names a budget of the same org.
	if _, err := st.SetNotificationChannel(ctx, orgB.ID, budA.ID, store.ChannelSlack, "u", "m", ownerB.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetNotificationChannel(B, A's budget) = %v", err)
	}

	// By row-level security: fenced to A, a query naming B sees nothing.
	err = st.Fenced(ctx, orgA.ID, 0, func(fenced *store.Store) error {
		if chs, err := fenced.NotificationChannels(ctx, orgB.ID); err != nil || len(chs) != 0 {
			t.Errorf("fenced to A, B's channels = %d, %v", len(chs), err)
		}
		if chs, err := fenced.ChannelsFor(ctx, orgB.ID, 0); err != nil || len(chs) != 0 {
			t.Errorf("fenced to A, channels for B = %d, %v", len(chs), err)
		}
		if ds, err := fenced.Deliveries(ctx, orgB.ID, 10); err != nil || len(ds) != 0 {
			t.Errorf("fenced to A, B's deliveries = %d, %v", len(ds), err)
		}
		if _, err := fenced.WebhookSecret(ctx, orgB.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("fenced to A, B's secret: %v", err)
		}
		if _, _, err := fenced.RecordDelivery(ctx, orgB.ID, store.NewDelivery{Kind: "test", Channel: "email", Target: "x", Subject: "s", DedupeKey: "k2", Body: []byte(`{}`)}); err == nil {
			t.Error("fenced to A, recorded a delivery for B")
		}
		if _, err := fenced.SetNotificationChannel(ctx, orgA.ID, 0, store.ChannelWebhook, "https://a.example/h", "https://a.example/…", ownerA.ID); err != nil {
			t.Errorf("fenced to A, setting A's webhook: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClaimDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	d, _, err := st.RecordDelivery(ctx, org.ID, store.NewDelivery{Kind: "digest", Channel: "email", Target: "a@example.com", Subject: "s", DedupeKey: "digest:2026-11-02", Body: []byte(`{"To":["a@example.com"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if again, created, err := st.RecordDelivery(ctx, org.ID, store.NewDelivery{Kind: "digest", Channel: "email", Target: "b@example.com", Subject: "other", DedupeKey: "digest:2026-11-02", Body: []byte(`{}`)}); err != nil || created || again.ID != d.ID || again.Target != "a@example.com" {
		t.Fatalf("same key again: %+v, created %v, %v", again, created, err)
	}

	c, ok, err := st.ClaimDelivery(ctx, org.ID, d.ID, time.Minute)
	if err != nil || !ok || c.Status != store.DeliverySending || c.Attempts != 1 || string(c.Body) != `{"To":["a@example.com"]}` {
		t.Fatalf("first claim: %+v, %v, %v", c, ok, err)
	}
	if c2, ok, err := st.ClaimDelivery(ctx, org.ID, d.ID, time.Minute); err != nil || ok || c2.Status != store.DeliverySending {
		t.Fatalf("claim while claimed: %+v, %v, %v", c2, ok, err)
	}
	// A claim whose lease ran out (its worker died) is taken over; the
	// first worker's outcome is then not recorded.
	if _, err := storetest.Pool(st).Exec(ctx, `UPDATE deliveries SET claimed_until = now() - interval '1 second' WHERE id = $1`, d.ID); err != nil {
		t.Fatal(err)
	}
	c2, ok, err := st.ClaimDelivery(ctx, org.ID, d.ID, time.Minute)
	if err != nil || !ok || c2.Attempts != 2 {
		t.Fatalf("claim after the lease: %+v, %v, %v", c2, ok, err)
	}
	if _, err := st.FinishDelivery(ctx, org.ID, d.ID, c.Attempts, store.DeliveryResult{Status: store.DeliverySent}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the first worker finishing late: %v", err)
	}
	f, err := st.FinishDelivery(ctx, org.ID, d.ID, c2.Attempts, store.DeliveryResult{Status: store.DeliverySent, ResponseCode: 250})
	if err != nil || f.Status != store.DeliverySent || f.SentAt == nil || f.ResponseCode != 250 {
		t.Fatalf("finish: %+v, %v", f, err)
	}
	if c3, ok, err := st.ClaimDelivery(ctx, org.ID, d.ID, time.Minute); err != nil || ok || c3.Status != store.DeliverySent || c3.Attempts != 2 {
		t.Fatalf("claim when sent: %+v, %v, %v", c3, ok, err)
	}
}

func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	if _, err := st.WebhookSecret(ctx, org.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no secret yet: %v", err)
	}
	if made, err := st.CreateWebhookSecret(ctx, org.ID, "one"); err != nil || !made {
		t.Fatal(made, err)
	}
	if made, err := st.CreateWebhookSecret(ctx, org.ID, "two"); err != nil || made {
		t.Fatalf("a second create replaced the secret: %v, %v", made, err)
	}
	if err := st.RotateWebhookSecret(ctx, org.ID, "three", time.Hour); err != nil {
		t.Fatal(err)
	}
	w, err := st.WebhookSecret(ctx, org.ID)
	if err != nil || w.Secret != "three" || w.Previous != "one" || time.Until(w.PreviousUntil) < 59*time.Minute {
		t.Fatalf("after rotation: %+v, %v", w, err)
	}
	if err := st.RotateWebhookSecret(ctx, org.ID, "four", -time.Second); err != nil {
		t.Fatal(err)
	}
	if w, err := st.WebhookSecret(ctx, org.ID); err != nil || w.Secret != "four" || w.Previous != "" {
		t.Fatalf("previous past its time: %+v, %v", w, err)
	}
}

// TestDeleteOldDeliveries forgets old deliveries that are done, and keeps
// recent ones and any still waiting to go out, however old.
func TestDeleteOldDeliveries(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	record := func(key, status string, age time.Duration) int64 {
		d, _, err := st.RecordDelivery(ctx, org.ID, store.NewDelivery{Kind: "digest", Channel: "email", Target: "a@example.com", Subject: "s", DedupeKey: key, Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool().Exec(ctx, `UPDATE deliveries SET status = $3, created_at = now() - make_interval(secs => $4) WHERE org_id = $1 AND id = $2`,
			org.ID, d.ID, status, age.Seconds()); err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	const retention = 90 * 24 * time.Hour
	record("old-sent", "sent", retention+time.Hour)
	record("old-failed", "failed", retention+time.Hour)
	oldPending := record("old-pending", "retrying", retention+time.Hour)
	recent := record("recent-sent", "sent", retention-time.Hour)

	n, err := st.DeleteOldDeliveries(ctx, retention)
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want 2", n, err)
	}
	left, err := st.Deliveries(ctx, org.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[int64]bool{}
	for _, d := range left {
		kept[d.ID] = true
	}
	if len(left) != 2 || !kept[oldPending] || !kept[recent] {
		t.Fatalf("kept %v, want the old unsent one and the recent one", kept)
	}
}
