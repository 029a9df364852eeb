package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func ctx() context.Context { return context.Background() }

// receiver is a loopback HTTP server standing in for Slack or a webhook
// receiver: it keeps every request and answers with the status its
// answer function gives (200 when nil).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	answer   func(n int) (int, string) // n: this request's number, from 1
	ok       atomic.Int32              // 2xx answers given
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, received{header: req.Header.Clone(), body: body})
		n, answer := len(r.requests), r.answer
		r.mu.Unlock()
		code, text := http.StatusOK, "ok"
		if answer != nil {
			code, text = answer(n)
		}
		if code < 300 {
			r.ok.Add(1)
		}
		w.WriteHeader(code)
		io.WriteString(w, text)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.requests...)
}

// recordingSender is a mail.Sender that keeps what it is given.
type recordingSender struct {
	mu   sync.Mutex
	sent []mail.Message
	err  error
}

func (s *recordingSender) Send(_ context.Context, m mail.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.sent = append(s.sent, m)
	return nil
}

type bundle struct {
	st     *store.Store
	org    store.Org
	owner  store.User
	mail   *recordingSender
	n      *notify.Notifier
	config notify.Config
}

// setup makes an org and a Notifier allowed to post to loopback receivers,
// as a self-hosted install with WEBHOOK_ALLOW_PRIVATE=1 is.
func setup(t *testing.T, cfg notify.Config) *bundle {
	t.Helper()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme ML"})
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://burnrate.example.com/"
	}
	sender := &recordingSender{}
	return &bundle{st: st, org: org, owner: owner, mail: sender, n: notify.New(st, sender, cfg), config: cfg}
}

func (b *bundle) channel(t *testing.T, budgetID int64, kind, url string) store.NotificationChannel {
	t.Helper()
	ch, err := b.st.SetNotificationChannel(ctx(), b.org.ID, budgetID, kind, url, notify.Mask(url), b.owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func (b *bundle) secret(t *testing.T) string {
	t.Helper()
	s := notify.NewWebhookSecret()
	if _, err := b.st.CreateWebhookSecret(ctx(), b.org.ID, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (b *bundle) budget(t *testing.T, name string) store.Budget {
	t.Helper()
	bud, err := b.st.CreateBudget(ctx(), b.org.ID, b.owner.ID, store.BudgetInput{Name: name, Amount: decimal.NewFromInt(1000),
		Currency: "USD", Period: "monthly", Thresholds: []int{50, 80, 100}})
	if err != nil {
		t.Fatal(err)
	}
	return bud
}

func alert(b *bundle, budgetID int64) notify.Notification {
	period := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return notify.Notification{
		Kind: notify.KindBudgetAlert, OrgID: b.org.ID, BudgetID: budgetID,
		Key:     notify.AlertKey(budgetID, period, 80),
		Subject: "GPUs passed 80% of its budget",
		Text:    "GPUs has spent 812.40 USD of 1,000.00 USD (81%) in November. <!channel> & friends",
		Link:    "/budgets/" + strconv.FormatInt(budgetID, 10),
		Payload: map[string]any{"budget_id": budgetID, "threshold": 80, "spent": "812.40", "currency": "USD"},
	}
}

// delivered fails t if Deliver did: delivered(t)(n.Deliver(…)).
func delivered(t *testing.T) func([]store.Delivery, error) []store.Delivery {
	return func(ds []store.Delivery, err error) []store.Delivery {
		t.Helper()
		if err != nil {
			t.Fatalf("deliver: %v", err)
		}
		return ds
	}
}

func TestSlackMessageShape(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true})
	rcv := newReceiver(t)
	b.channel(t, 0, store.ChannelSlack, rcv.URL+"/services/T000/B000/slacksecretXXXX")
	bud := b.budget(t, "GPUs")

	ds := delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if len(ds) != 1 || ds[0].Status != store.DeliverySent || ds[0].ResponseCode != 200 || ds[0].Attempts != 1 || ds[0].SentAt == nil {
		t.Fatalf("deliveries = %+v, want one sent on the first attempt", ds)
	}
	if ds[0].Channel != "slack" || ds[0].Kind != "budget_alert" || ds[0].DedupeKey != "alert:budget="+strconv.FormatInt(bud.ID, 10)+":period=2026-11-01:threshold=80" {
		t.Errorf("delivery = %+v", ds[0])
	}
	if strings.Contains(ds[0].Target, "slacksecret") || !strings.HasSuffix(ds[0].Target, "/…/XXXX") {
		t.Errorf("target %q is not masked", ds[0].Target)
	}
	reqs := rcv.got()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	if ct := reqs[0].header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
			Elements []struct {
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(reqs[0].body, &msg); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, reqs[0].body)
	}
	link := "https://burnrate.example.com/budgets/" + strconv.FormatInt(bud.ID, 10)
	for _, want := range []string{"GPUs passed 80% of its budget", "812.40 USD", "&lt;!channel&gt; &amp; friends", "<" + link + "|Open in Burnrate>"} {
		if !strings.Contains(msg.Text, want) {
			t.Errorf("text %q lacks %q", msg.Text, want)
		}
	}
	if strings.Contains(msg.Text, "<!channel>") {
		t.Error("text pings the channel: mrkdwn is not escaped")
	}
	if len(msg.Blocks) != 3 {
		t.Fatalf("blocks = %+v, want header, section, actions", msg.Blocks)
	}
	if bl := msg.Blocks[0]; bl.Type != "header" || bl.Text.Type != "plain_text" || bl.Text.Text != "GPUs passed 80% of its budget" {
		t.Errorf("header block = %+v", bl)
	}
	if bl := msg.Blocks[1]; bl.Type != "section" || bl.Text.Type != "mrkdwn" || !strings.Contains(bl.Text.Text, "812.40 USD of 1,000.00 USD") {
		t.Errorf("section block = %+v", bl)
	}
	if bl := msg.Blocks[2]; bl.Type != "actions" || len(bl.Elements) != 1 || bl.Elements[0].Type != "button" || bl.Elements[0].URL != link {
		t.Errorf("actions block = %+v", bl)
	}
}

// verifySignature is the receiver's check exactly as docs/notifications.md
// gives it, so that the documented algorithm is the one under test.
func verifySignature(secret string, header http.Header, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(header.Get("Burnrate-Timestamp"), 10, 64)
	if err != nil {
		return errors.New("no timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("timestamp too old or in the future")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", ts)
	mac.Write(body)
	want := mac.Sum(nil)
	for _, part := range strings.Split(header.Get("Burnrate-Signature"), ",") {
		sig, ok := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !ok {
			continue
		}
		if got, err := hex.DecodeString(sig); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no valid signature")
}

func TestWebhookIsSignedAsDocumented(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true})
	rcv := newReceiver(t)
	b.channel(t, 0, store.ChannelWebhook, rcv.URL+"/hooks/burnrate?token=abc123")
	secret := b.secret(t)
	bud := b.budget(t, "GPUs")

	ds := delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if len(ds) != 1 || ds[0].Status != store.DeliverySent {
		t.Fatalf("deliveries = %+v", ds)
	}
	reqs := rcv.got()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.header.Get("Burnrate-Timestamp") == "" || !strings.HasPrefix(r.header.Get("Burnrate-Signature"), "v1=") {
		t.Fatalf("headers = %v", r.header)
	}
	if err := verifySignature(secret, r.header, r.body, time.Now()); err != nil {
		t.Fatalf("signature does not verify: %v (headers %v)", err, r.header)
	}
	if err := verifySignature(notify.NewWebhookSecret(), r.header, r.body, time.Now()); err == nil {
		t.Fatal("a signature verified with another secret")
	}
	if err := verifySignature(secret, r.header, append(r.body, ' '), time.Now()); err == nil {
		t.Fatal("a signature verified over a changed body")
	}
	if err := verifySignature(secret, r.header, r.body, time.Now().Add(6*time.Minute)); err == nil {
		t.Fatal("a six-minute-old timestamp was accepted")
	}
	if got := r.header.Get("Burnrate-Event"); got != "budget_alert" {
		t.Errorf("Burnrate-Event = %q", got)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": ds[0].DedupeKey, "type": "budget_alert", "org_id": float64(b.org.ID), "budget_id": float64(bud.ID),
		"subject": "GPUs passed 80% of its budget", "link": "https://burnrate.example.com/budgets/" + strconv.FormatInt(bud.ID, 10),
	}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body[%q] = %v, want %v", k, body[k], v)
		}
	}
	data, _ := body["data"].(map[string]any)
	if data["threshold"] != float64(80) || data["spent"] != "812.40" {
		t.Errorf("data = %v", body["data"])
	}
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(body["created_at"])); err != nil {
		t.Errorf("created_at = %v", body["created_at"])
	}

	// After a rotation both the new and, for a day, the old secret sign.
	rotated := notify.NewWebhookSecret()
	if err := b.st.RotateWebhookSecret(ctx(), b.org.ID, rotated, notify.RotationOverlap); err != nil {
		t.Fatal(err)
	}
	delivered(t)(b.n.Deliver(ctx(), notify.NewTest(b.org, store.ChannelWebhook, 0, nil)))
	reqs = rcv.got()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	for _, s := range []string{rotated, secret} {
		if err := verifySignature(s, reqs[1].header, reqs[1].body, time.Now()); err != nil {
			t.Errorf("after rotation: %v (%s)", err, reqs[1].header.Get("Burnrate-Signature"))
		}
	}
}

func TestFailedDeliveryIsRetriedToOneSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true})
	rcv := newReceiver(t)
	var down atomic.Bool
	down.Store(true)
	rcv.answer = func(int) (int, string) {
		if down.Load() {
			return http.StatusInternalServerError, "upstream\nexploded"
		}
		return http.StatusOK, "ok"
	}
	b.channel(t, 0, store.ChannelSlack, rcv.URL+"/services/T/B/X")
	bud := b.budget(t, "GPUs")

	ds := delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	d := ds[0]
	if d.Status != store.DeliveryRetrying || d.ResponseCode != 500 || d.Attempts != 1 || d.LastError != "HTTP 500: upstream exploded" || d.SentAt != nil {
		t.Fatalf("after a 500: %+v", d)
	}
	// What a job worker does on its next try: still down.
	err := b.n.DeliverOne(ctx(), b.org.ID, d.ID)
	if err == nil || errors.Is(err, notify.ErrGaveUp) {
		t.Fatalf("DeliverOne on a 500 = %v, want an error to retry", err)
	}
	down.Store(false)
	if err := b.n.DeliverOne(ctx(), b.org.ID, d.ID); err != nil {
		t.Fatalf("DeliverOne once up: %v", err)
	}
	// A job retried after the success (its worker lost the answer, say)
	// and the same notification produced again post nothing more.
	if err := b.n.DeliverOne(ctx(), b.org.ID, d.ID); err != nil {
		t.Fatalf("DeliverOne after success: %v", err)
	}
	delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if n := rcv.ok.Load(); n != 1 {
		t.Fatalf("successful POSTs = %d, want exactly 1", n)
	}
	if n := len(rcv.got()); n != 3 {
		t.Fatalf("POSTs = %d, want 3 (two refused, one taken)", n)
	}
	d, err = b.st.Delivery(ctx(), b.org.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != store.DeliverySent || d.Attempts != 3 || d.ResponseCode != 200 || d.LastError != "" || d.SentAt == nil {
		t.Fatalf("after the retry: %+v", d)
	}
}

func TestSameKeyIsPostedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true})
	rcv := newReceiver(t)
	rcv.answer = func(int) (int, string) {
		time.Sleep(100 * time.Millisecond) // so that concurrent senders overlap
		return http.StatusOK, "ok"
	}
	b.channel(t, 0, store.ChannelWebhook, rcv.URL+"/hook")
	b.secret(t)
	bud := b.budget(t, "GPUs")

	// Produced by four processes at once, then twice more one after the
	// other: one delivery, one POST.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := b.n.Deliver(ctx(), alert(b, bud.ID)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if n := len(rcv.got()); n != 1 {
		t.Fatalf("receiver got %d POSTs for one key, want 1", n)
	}
	ds, err := b.st.Deliveries(ctx(), b.org.ID, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries = %d (%v), want 1", len(ds), err)
	}

	// Workers racing on one pending delivery: one claims it, the others
	// leave it alone.
	other := alert(b, bud.ID)
	other.Key = notify.AlertKey(bud.ID, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 80)
	queued := &recordingQueue{}
	cfg := b.config
	cfg.Enqueuer = queued
	qn := notify.New(b.st, b.mail, cfg)
	ds = delivered(t)(qn.Deliver(ctx(), other))
	var sent atomic.Int32
	for range 4 {
		wg.Go(func() {
			if err := qn.DeliverOne(ctx(), b.org.ID, ds[0].ID); err == nil {
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	if n := len(rcv.got()); n != 2 {
		t.Fatalf("receiver got %d POSTs, want 2", n)
	}
	if sent.Load() < 1 {
		t.Fatal("no worker reported the delivery sent")
	}
}

// recordingQueue is an Enqueuer that keeps what it is given, as the job
// queue would.
type recordingQueue struct {
	mu  sync.Mutex
	ids []int64
	err error
}

func (q *recordingQueue) EnqueueDelivery(_ context.Context, _, id int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.ids = append(q.ids, id)
	return nil
}

func TestEnqueuedDeliveriesWaitForTheWorker(t *testing.T) {
	t.Parallel()
	queue := &recordingQueue{err: errors.New("queue down")}
	b := setup(t, notify.Config{AllowPrivate: true, Enqueuer: queue})
	rcv := newReceiver(t)
	b.channel(t, 0, store.ChannelSlack, rcv.URL+"/services/T/B/X")
	bud := b.budget(t, "GPUs")

	// Enqueuing fails: the delivery stays pending, and producing the
	// notification again hands it on again.
	ds, err := b.n.Deliver(ctx(), alert(b, bud.ID))
	if err == nil || len(ds) != 1 || ds[0].Status != store.DeliveryPending {
		t.Fatalf("deliver with the queue down: %+v, %v", ds, err)
	}
	queue.err = nil
	ds = delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if len(queue.ids) != 1 || queue.ids[0] != ds[0].ID || len(rcv.got()) != 0 {
		t.Fatalf("enqueued %v, posted %d; want the delivery enqueued and nothing posted", queue.ids, len(rcv.got()))
	}
	if err := b.n.DeliverOne(ctx(), b.org.ID, queue.ids[0]); err != nil {
		t.Fatal(err)
	}
	// Sent: producing it again enqueues nothing.
	delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if len(queue.ids) != 1 || len(rcv.got()) != 1 {
		t.Fatalf("enqueued %v, posted %d; want 1 and 1", queue.ids, len(rcv.got()))
	}
}

func TestReceiverRefusalIsFinal(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true, MaxAttempts: 2})
	gone := newReceiver(t)
	gone.answer = func(int) (int, string) { return http.StatusNotFound, "no_service" }
	flaky := newReceiver(t)
	flaky.answer = func(int) (int, string) { return http.StatusServiceUnavailable, "" }
	bud := b.budget(t, "GPUs")
	b.channel(t, 0, store.ChannelSlack, gone.URL+"/services/T/B/X")
	b.channel(t, bud.ID, store.ChannelSlack, flaky.URL+"/services/T/B/Y")

	// A 404 (Slack's answer for a removed webhook) will not get better.
	ds := delivered(t)(b.n.Deliver(ctx(), notify.NewTest(b.org, store.ChannelSlack, 0, nil)))
	if d := ds[0]; d.Status != store.DeliveryFailed || d.ResponseCode != 404 || d.LastError != "HTTP 404: no_service" {
		t.Fatalf("after a 404: %+v", d)
	}
	if err := b.n.DeliverOne(ctx(), b.org.ID, ds[0].ID); !errors.Is(err, notify.ErrGaveUp) {
		t.Fatalf("DeliverOne after a 404 = %v, want ErrGaveUp", err)
	}
	// A 503 is retried until MaxAttempts, then given up on.
	ds = delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if ds[0].Status != store.DeliveryRetrying || ds[0].LastError != "HTTP 503" {
		t.Fatalf("after a 503: %+v", ds[0])
	}
	if err := b.n.DeliverOne(ctx(), b.org.ID, ds[0].ID); !errors.Is(err, notify.ErrGaveUp) {
		t.Fatalf("second 503 with MaxAttempts 2 = %v, want ErrGaveUp", err)
	}
	if d, _ := b.st.Delivery(ctx(), b.org.ID, ds[0].ID); d.Status != store.DeliveryFailed || d.Attempts != 2 {
		t.Fatalf("after MaxAttempts: %+v", d)
	}

	// A removed channel fails its deliveries for good.
	ch := b.channel(t, 0, store.ChannelWebhook, gone.URL+"/hook")
	queue := &recordingQueue{}
	cfg := b.config
	cfg.Enqueuer = queue
	ds = delivered(t)(notify.New(b.st, b.mail, cfg).Deliver(ctx(), notify.NewTest(b.org, store.ChannelWebhook, 0, nil)))
	if err := b.st.DeleteNotificationChannel(ctx(), b.org.ID, ch.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.n.DeliverOne(ctx(), b.org.ID, ds[0].ID); !errors.Is(err, notify.ErrGaveUp) {
		t.Fatalf("DeliverOne to a removed channel = %v, want ErrGaveUp", err)
	}
	if d, _ := b.st.Delivery(ctx(), b.org.ID, ds[0].ID); d.Status != store.DeliveryFailed || d.LastError != "the channel was removed" {
		t.Fatalf("removed channel: %+v", d)
	}
}

func TestTimeoutAndUnreachableAreRetriedWithoutTheURL(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	slow := newReceiver(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	slow.answer = func(int) (int, string) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		return http.StatusOK, ""
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	b.channel(t, 0, store.ChannelSlack, slow.URL+"/services/T/B/slowsecret")
	b.channel(t, 0, store.ChannelWebhook, closed.URL+"/hook/closedsecret")
	b.secret(t)

	start := time.Now()
	ds := delivered(t)(b.n.Deliver(ctx(), notify.NewTest(b.org, "", 0, nil)))
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("two failing channels took %v; the timeout is 300ms", took)
	}
	if len(ds) != 2 {
		t.Fatalf("deliveries = %+v, want slack and webhook", ds)
	}
	for _, d := range ds {
		if d.Status != store.DeliveryRetrying || d.ResponseCode != 0 || d.LastError == "" {
			t.Errorf("%s: %+v, want retrying with an error", d.Channel, d)
		}
		if strings.Contains(d.LastError, "secret") || strings.Contains(d.LastError, "/hook") || strings.Contains(d.LastError, "/services") {
			t.Errorf("%s: error %q shows the URL", d.Channel, d.LastError)
		}
	}
	if ds[0].Channel == store.ChannelSlack && ds[0].LastError != "no answer within the timeout" {
		t.Errorf("slack error = %q", ds[0].LastError)
	}
}

func TestEmailGoesToTheRecipients(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{})
	nt := notify.Notification{
		Kind: notify.KindDigest, OrgID: b.org.ID, Key: notify.DigestKey(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)),
		Subject: "Acme ML spent 1,234.00 USD yesterday", Text: "Yesterday: 1,234.00 USD.", HTML: `<p>Yesterday</p><img src="cid:chart">`,
		Link:    "/dashboard",
		Email:   []string{"lead@example.com", "cfo@example.com"},
		Inline:  []mail.Part{{ContentID: "chart", Filename: "chart.png", ContentType: "image/png", Data: []byte("\x89PNG fake")}},
		Headers: map[string]string{"List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
	}
	ds := delivered(t)(b.n.Deliver(ctx(), nt))
	if len(ds) != 1 || ds[0].Channel != "email" || ds[0].Status != store.DeliverySent || ds[0].Target != "lead@example.com, cfo@example.com" {
		t.Fatalf("deliveries = %+v", ds)
	}
	delivered(t)(b.n.Deliver(ctx(), nt))
	if len(b.mail.sent) != 1 {
		t.Fatalf("sent %d emails, want 1", len(b.mail.sent))
	}
	m := b.mail.sent[0]
	if strings.Join(m.To, ",") != "lead@example.com,cfo@example.com" || m.Subject != nt.Subject || m.HTML != nt.HTML {
		t.Errorf("message = %+v", m)
	}
	if !strings.Contains(m.Text, "Yesterday: 1,234.00 USD.") || !strings.Contains(m.Text, "https://burnrate.example.com/dashboard") {
		t.Errorf("text = %q, want the text and the absolute link", m.Text)
	}
	if len(m.Inline) != 1 || string(m.Inline[0].Data) != "\x89PNG fake" || m.Inline[0].ContentID != "chart" {
		t.Errorf("inline = %+v", m.Inline)
	}
	if m.Headers["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" {
		t.Errorf("headers = %v", m.Headers)
	}

	// The sender failing is retried; no sender at all is not.
	b.mail.err = errors.New("smtp: 421 try later")
	nt.Key = notify.DigestKey(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	ds = delivered(t)(b.n.Deliver(ctx(), nt))
	if ds[0].Status != store.DeliveryRetrying || ds[0].LastError != "email: smtp: 421 try later" {
		t.Fatalf("sender failing: %+v", ds[0])
	}
	ds = delivered(t)(notify.New(b.st, nil, b.config).Deliver(ctx(), notify.NewTest(b.org, store.ChannelEmail, 0, []string{"x@example.com"})))
	if ds[0].Status != store.DeliveryFailed || ds[0].LastError != "email is not set up on this server" {
		t.Fatalf("no sender: %+v", ds[0])
	}
}

func TestBudgetChannelReplacesTheOrgs(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{AllowPrivate: true})
	orgHook, budgetHook := newReceiver(t), newReceiver(t)
	gpus, llm := b.budget(t, "GPUs"), b.budget(t, "LLM")
	b.channel(t, 0, store.ChannelSlack, orgHook.URL+"/services/org")
	b.channel(t, gpus.ID, store.ChannelSlack, budgetHook.URL+"/services/gpus")

	delivered(t)(b.n.Deliver(ctx(), alert(b, gpus.ID)))
	delivered(t)(b.n.Deliver(ctx(), alert(b, llm.ID)))
	delivered(t)(b.n.Deliver(ctx(), notify.Notification{Kind: notify.KindDigest, OrgID: b.org.ID, Key: "digest:2026-11-02", Subject: "Digest"}))
	if n, m := len(orgHook.got()), len(budgetHook.got()); n != 2 || m != 1 {
		t.Fatalf("org channel got %d, budget channel %d; want 2 (LLM alert, digest) and 1 (GPUs alert)", n, m)
	}
	if !strings.Contains(string(budgetHook.got()[0].body), "GPUs passed") {
		t.Errorf("budget channel got %s", budgetHook.got()[0].body)
	}
}

func TestDeliverRefusesIncompleteNotifications(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Config{})
	for name, nt := range map[string]notify.Notification{
		"NoKey":      {Kind: notify.KindBudgetAlert, OrgID: b.org.ID, Subject: "x"},
		"NoSubject":  {Kind: notify.KindDigest, OrgID: b.org.ID, Key: "k"},
		"NoOrg":      {Kind: notify.KindDigest, Key: "k", Subject: "x"},
		"UnknownKin": {Kind: "weekly", OrgID: b.org.ID, Key: "k", Subject: "x"},
	} {
		if _, err := b.n.Deliver(ctx(), nt); err == nil {
			t.Errorf("%s: delivered", name)
		}
	}
}

// A channel URL sealed under SECRET_KEY (as the pages save it) is not in
// the database in clear, and the alert still reaches it; a server without
// the key says why it cannot deliver.
func TestSealedChannelDelivers(t *testing.T) {
	t.Parallel()
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	key, err := seal.ParseKey("SECRET_KEY", base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, notify.Config{AllowPrivate: true, Secrets: key})
	rcv := newReceiver(t)
	url := rcv.URL + "/services/T0SEALED/B0SEALED/sealedsealedsealed"
	ch, err := b.st.SetNotificationChannel(ctx(), b.org.ID, 0, store.ChannelSlack, key.SealChannel(b.org.ID, url), notify.Mask(url), b.owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ch.URLMasked != "http://"+strings.TrimPrefix(rcv.URL, "http://")+"/…/aled" {
		t.Fatalf("mask %q", ch.URLMasked)
	}
	var stored string
	var sealedAt *time.Time
	if err := b.st.Pool().QueryRow(ctx(), `SELECT url, sealed_at FROM notification_channels WHERE id = $1`, ch.ID).Scan(&stored, &sealedAt); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "sealedsealed") || strings.Contains(stored, "T0SEALED") || !strings.HasPrefix(stored, "v1.") || sealedAt == nil {
		t.Fatalf("stored %q (sealed at %v): the URL is in clear", stored, sealedAt)
	}
	bud := b.budget(t, "GPUs")
	ds := delivered(t)(b.n.Deliver(ctx(), alert(b, bud.ID)))
	if ds[0].Status != store.DeliverySent || len(rcv.got()) != 1 || ds[0].Target != notify.Mask(url) {
		t.Fatalf("delivery %+v, %d posts", ds[0], len(rcv.got()))
	}

	cfg := b.config
	cfg.Secrets = nil
	other := alert(b, bud.ID)
	other.Key += ":again"
	ds = delivered(t)(notify.New(b.st, b.mail, cfg).Deliver(ctx(), other))
	if ds[0].Status != store.DeliveryFailed || !strings.Contains(ds[0].LastError, "sealed under SECRET_KEY, and this server has none") {
		t.Fatalf("without the key: %+v", ds[0])
	}
}
