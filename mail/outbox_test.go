package mail_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/mail/mailtest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// syncBuffer is a log both the test and the workers touch.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type outboxBundle struct {
	st     *store.Store
	outbox *mail.Outbox
	client *jobs.Client
	log    *syncBuffer
}

// runOutbox runs a job client that delivers outbox mail with sender (nil:
// mail is not configured) until the test ends.
func runOutbox(t *testing.T, sender mail.Sender) outboxBundle {
	t.Helper()
	st := storetest.New(t)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	workers := river.NewWorkers()
	river.AddWorker(workers, &mail.SendWorker{Store: st, Sender: sender, Log: log})
	c, err := jobs.New(st, jobs.Config{Workers: workers, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
	return outboxBundle{st: st, outbox: mail.NewOutbox(c.Queue(), sender != nil), client: c, log: logs}
}

// waitMail waits until the outbox mail id is no longer queued, and returns
// it.
func (b outboxBundle) waitMail(t *testing.T, orgID, id int64) store.OutboxMail {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _, err := b.st.OutboxMessage(context.Background(), orgID, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != store.MailQueued {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox mail %d still queued after 30s (attempts %d, last error %q)", id, m.Attempts, m.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOutboxRetriesUntilDelivered: the mail server refuses the first try
// (451, try later); River retries, and the mail is delivered exactly once,
// its outbox row saying so.
func TestOutboxRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, mailtest.Options{})
	smtp, err := mail.NewSMTP(srv.URL(), "Burnrate <burnrate@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	b := runOutbox(t, smtp)
	org, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	srv.Refuse(1, 451)
	start := time.Now()
	id, err := b.outbox.Queue(context.Background(), b.st, org.ID, "test", mail.Message{
		To: []string{"ann@example.com"}, Subject: "Twice refused, once sent", Text: "hello",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := b.waitMail(t, org.ID, id)
	t.Logf("delivered %s after queueing, on the retry", time.Since(start).Round(time.Millisecond))
	if got.Status != store.MailSent || got.Attempts != 2 || got.LastError != "" || got.SentAt == nil {
		t.Fatalf("outbox row = %+v, want sent on the 2nd attempt", got)
	}
	storetest.WaitJobsDone(t, b.st, 30*time.Second, mail.SendArgs{}.Kind()) // a duplicate would be sent by now
	if ms, tries := srv.Messages(), srv.Tries(); len(ms) != 1 || tries != 2 || ms[0].Subject != "Twice refused, once sent" {
		t.Fatalf("server got %d messages in %d tries, want 1 in 2", len(ms), tries)
	}
	if got.To[0] != "ann@example.com" || got.Kind != "test" || got.OrgID != org.ID {
		t.Errorf("outbox row = %+v", got)
	}
}

// TestOutboxGivesUpOnPermanentRefusal: a 550 is not retried; the mail is
// marked failed with the server's reply.
func TestOutboxGivesUpOnPermanentRefusal(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, mailtest.Options{})
	smtp, err := mail.NewSMTP(srv.URL(), mail.DefaultFrom)
	if err != nil {
		t.Fatal(err)
	}
	b := runOutbox(t, smtp)
	srv.Refuse(1, 550)
	id, err := b.outbox.Queue(context.Background(), b.st, 0, "test", mail.Message{To: []string{"nobody@example.com"}, Subject: "x", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	got := b.waitMail(t, 0, id)
	if got.Status != store.MailFailed || got.Attempts != 1 || !strings.Contains(got.LastError, "550") {
		t.Fatalf("outbox row = %+v, want failed after one attempt with the 550", got)
	}
	storetest.WaitJobsDone(t, b.st, 30*time.Second, mail.SendArgs{}.Kind()) // a retry would be tried by now
	if tries := srv.Tries(); tries != 1 {
		t.Fatalf("%d tries, want 1", tries)
	}
}

// TestOutboxWithoutSMTP: with mail not configured, the mail stays in the
// outbox marked not sent, and the log says to whom and what.
func TestOutboxWithoutSMTP(t *testing.T) {
	t.Parallel()
	b := runOutbox(t, nil)
	if b.outbox.Configured() {
		t.Fatal("an outbox without a sender says mail is configured")
	}
	org, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	id, err := b.outbox.Queue(context.Background(), b.st, org.ID, "invite", mail.Message{
		To: []string{"ann@example.com"}, Subject: "You are invited", Text: "join",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := b.waitMail(t, org.ID, id)
	if got.Status != store.MailNotSent || got.LastError != mail.NotConfigured || got.Attempts != 0 {
		t.Fatalf("outbox row = %+v, want not sent", got)
	}
	listed, err := b.st.OutboxMails(context.Background(), org.ID, 10)
	if err != nil || len(listed) != 1 || listed[0].ID != id {
		t.Fatalf("org outbox = %+v, %v", listed, err)
	}
	logs := b.log.String()
	for _, want := range []string{"level=INFO", "mail is not configured", "ann@example.com", "You are invited"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

// TestOutboxQueuesInTheCallersTransaction: mail queued in a transaction
// that rolls back is neither stored nor sent.
func TestOutboxQueuesInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	b := runOutbox(t, nil)
	ctx := context.Background()
	errBoom := errors.New("boom")
	err := b.st.InTx(ctx, func(tx *store.Store) error {
		if _, err := b.outbox.Queue(ctx, tx, 0, "test", mail.Message{To: []string{"a@example.com"}, Subject: "x", Text: "x"}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatal(err)
	}
	var rows, queued int
	if err := storetest.Pool(b.st).QueryRow(ctx, `SELECT (SELECT count(*) FROM outbox), (SELECT count(*) FROM river_job WHERE kind = 'mail')`).Scan(&rows, &queued); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || queued != 0 {
		t.Fatalf("after a rollback: %d outbox rows, %d mail jobs", rows, queued)
	}
}
