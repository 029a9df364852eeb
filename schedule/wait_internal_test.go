package schedule

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

type sentBox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (b *sentBox) Send(_ context.Context, m mail.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, m)
	return nil
}

func (b *sentBox) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sent)
}

// TestDigestWaitsForYesterdaysData: at its send hour the digest of a day
// one source has not delivered yet waits (the job snoozes) and sends
// nothing; once the source delivers it goes out; and at the wait-until
// hour it goes out whatever is missing, naming it.
func TestDigestWaitsForYesterdaysData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	load := func(org store.Org, provider, account string, from, to string) {
		t.Helper()
		var f strings.Builder
		f.WriteString("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n")
		for d, _ := time.Parse(time.DateOnly, from); d.Format(time.DateOnly) <= to; d = d.AddDate(0, 0, 1) {
			fmt.Fprintf(&f, "40,%s,%s,USD,%s,Compute,%s\n", d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339), provider, account)
		}
		if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: provider + from + to + ".csv", Via: "test"},
			strings.NewReader(f.String())); err != nil {
			t.Fatal(err)
		}
	}
	worker := func(box *sentBox, now *time.Time) *rivertest.Worker[DigestArgs, pgx.Tx] {
		l := &Loop{Store: st, Notifier: notify.New(st, box, notify.Config{BaseURL: "http://burnrate.test"}), BaseURL: "http://burnrate.test",
			Now: func() time.Time { return *now }}
		return rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[DigestArgs](&DigestWorker{loop: l}))
	}
	work := func(w *rivertest.Worker[DigestArgs, pgx.Tx], org store.Org) river.EventKind {
		t.Helper()
		tx, err := st.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		res, err := w.Work(ctx, t, tx, DigestArgs{OrgID: org.ID, Day: "2026-03-10"}, nil)
		if err != nil && res == nil {
			t.Fatal(err)
		}
		return res.EventKind
	}
	newOrg := func() store.Org {
		org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme ML"})
		set := store.DefaultDigestSettings(org.ID)
		set.When, set.SendHour, set.WaitUntilHour = store.DigestWhenAlways, 8, 12
		if err := st.SaveDigestSettings(ctx, set, 0); err != nil {
			t.Fatal(err)
		}
		load(org, "AWS", "111", "2026-02-20", "2026-03-10")
		load(org, "OpenAI", "org-1", "2026-02-20", "2026-03-09") // a day behind
		return org
	}

	// It waits, then goes out once the day is in.
	org := newOrg()
	now := time.Date(2026, 3, 11, 8, 0, 0, 0, time.UTC)
	box := &sentBox{}
	w := worker(box, &now)
	if k := work(w, org); k != river.EventKindJobSnoozed || box.count() != 0 {
		t.Fatalf("at 08:00 with OpenAI a day behind: %s and %d emails, want snoozed and none", k, box.count())
	}
	load(org, "OpenAI", "org-1", "2026-03-10", "2026-03-10")
	now = now.Add(30 * time.Minute)
	if k := work(w, org); k != river.EventKindJobCompleted || box.count() != 1 {
		t.Fatalf("at 08:30 with every source in: %s and %d emails, want sent", k, box.count())
	}
	if m := box.sent[0]; strings.Contains(m.Subject, "partial") || strings.Contains(m.Text, "has not sent all") {
		t.Errorf("the complete digest says something is missing: %q\n%s", m.Subject, m.Text)
	}

	// Without the data, it goes out at the wait-until hour, naming it.
	org = newOrg()
	now = time.Date(2026, 3, 11, 11, 30, 0, 0, time.UTC)
	box = &sentBox{}
	w = worker(box, &now)
	if k := work(w, org); k != river.EventKindJobSnoozed || box.count() != 0 {
		t.Fatalf("at 11:30: %s and %d emails, want snoozed", k, box.count())
	}
	now = time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	if k := work(w, org); k != river.EventKindJobCompleted || box.count() != 1 {
		t.Fatalf("at 12:00: %s and %d emails, want sent anyway", k, box.count())
	}
	if m := box.sent[0]; !strings.Contains(m.Subject, "(partial)") || !strings.Contains(m.Text, "OpenAI (focus) has not sent all of Tue 10 Mar yet: through Mon 9 Mar") {
		t.Errorf("the digest sent anyway does not name what is missing: %q\n%s", m.Subject, m.Text)
	}
}
