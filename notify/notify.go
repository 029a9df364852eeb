// Package notify is where budget alerts and digests go: it fans a
// Notification out to an org's channels (email through a mail.Sender, a
// Slack incoming webhook, a JSON webhook signed with HMAC-SHA256), records
// each delivery in the deliveries table, and sends each one at most once
// after it succeeded, however often it is retried. See docs/notifications.md.
//
// Deliver records the deliveries and hands each to an Enqueuer, whose job
// worker calls DeliverOne; without an Enqueuer, Deliver sends them itself,
// each bounded by the HTTP timeout.
package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/store"
)

// Kind is what a notification is about.
type Kind string

// The kinds of notification.
const (
	KindBudgetAlert Kind = "budget_alert"
	KindDigest      Kind = "digest"
	KindTest        Kind = "test"
	// KindConnection is a connection that started failing, stalled, or
	// works again (docs/connections.md, "When a connection fails").
	KindConnection Kind = "connection"
)

// Notification is one message for an org, to be sent over each of its
// channels: Subject and Text everywhere, HTML and Inline in email, Link as
// Slack's button and the webhook's "link", Payload as the webhook's "data".
type Notification struct {
	Kind  Kind
	OrgID int64
	// BudgetID is the budget an alert is about (0: none). The budget's own
	// Slack or webhook channel, if it has one, replaces the org's.
	BudgetID int64
	// Key names the notification, and is the same however often it is
	// produced: each channel gets a Key once. AlertKey and DigestKey make
	// the usual ones. Tests (KindTest) get a fresh key when it is empty.
	Key     string
	Subject string
	Text    string
	HTML    string // email only; empty for a text-only email
	// Link is an absolute URL, or a path ("/budgets/12") that Deliver
	// joins to the base URL.
	Link    string
	Payload map[string]any
	// Email lists the recipients; none: no email.
	Email []string
	// Inline are the parts the HTML refers to by Content-ID (a chart).
	Inline []mail.Part
	// Headers are extra email headers (List-Unsubscribe on the digest).
	Headers map[string]string
	// Channels limits the channels used ("email", "slack", "webhook");
	// empty: every channel the org (or budget) has.
	Channels []string
}

// AlertKey is the Key of budgetID's alert for threshold percent in the
// period starting periodStart.
func AlertKey(budgetID int64, periodStart time.Time, threshold int) string {
	return fmt.Sprintf("alert:budget=%d:period=%s:threshold=%d", budgetID, periodStart.Format(time.DateOnly), threshold)
}

// DigestKey is the Key of the digest about day.
func DigestKey(day time.Time) string { return "digest:" + day.Format(time.DateOnly) }

// Enqueuer hands a recorded delivery to the job queue. Its worker calls
// DeliverOne, and again later while DeliverOne returns an error that is not
// ErrGaveUp.
type Enqueuer interface {
	EnqueueDelivery(ctx context.Context, orgID, deliveryID int64) error
}

// Config is what a Notifier needs besides the store and the mail sender.
type Config struct {
	// BaseURL is where people reach Burnrate; relative links are joined
	// to it.
	BaseURL string
	// AllowPrivate lets webhooks and Slack URLs point at loopback, private
	// and link-local addresses, and at hosts other than hooks.slack.com,
	// over plain http: for self-hosted installs whose receivers are on the
	// same network (WEBHOOK_ALLOW_PRIVATE=1). Off, a URL that resolves to
	// such an address is refused when the connection is made.
	AllowPrivate bool
	// Timeout bounds each HTTP request, connection to last byte
	// (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxAttempts is the attempt after whose failure a delivery is given
	// up on (DefaultMaxAttempts when 0).
	MaxAttempts int
	// Enqueuer sends deliveries through the job queue; nil: Deliver sends
	// them at once.
	Enqueuer Enqueuer
	// Mailer, when set, takes email instead of the mail.Sender given to
	// New: the org's outbox, which sends it by SMTP with retries of its
	// own, or keeps it (listed under Settings → Mail) when mail is not
	// configured. An email delivery is then done once the outbox has it.
	Mailer Mailer
	// Log is where failed attempts are logged (nothing when nil).
	Log *slog.Logger
	// Secrets opens the Slack and webhook URLs the store holds sealed
	// (seal.Key under SECRET_KEY); nil on a server without one, which
	// delivers only to URLs still in clear.
	Secrets Opener
}

// Opener opens a channel URL sealed for an org.
type Opener interface {
	OpenChannel(orgID int64, sealed string) (string, error)
}

// channelURL is ch's URL, opened when it is sealed.
func (n *Notifier) channelURL(ch store.NotificationChannel) (string, error) {
	if !strings.HasPrefix(ch.URL, "v1.") {
		return ch.URL, nil // stored before URLs were sealed; sealed at the next start with SECRET_KEY
	}
	if n.cfg.Secrets == nil {
		return "", errors.New("the channel's URL is sealed under SECRET_KEY, and this server has none: start it with SECRET_KEY")
	}
	return n.cfg.Secrets.OpenChannel(ch.OrgID, ch.URL)
}

// Mailer hands an org's email on, as mail of a kind (digest, budget_alert).
type Mailer interface {
	Mail(ctx context.Context, orgID int64, kind string, m mail.Message) error
}

// Defaults of Config.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 10
)

// mailTimeout bounds handing one email to the mail sender.
const mailTimeout = 30 * time.Second

// claimLease is how long a claimed delivery stays another worker's: longer
// than any attempt takes, so that only a worker that died loses its claim.
const claimLease = 2 * time.Minute

// ErrGaveUp marks a delivery that failed for good: the receiver refused it
// (HTTP 4xx other than 408 and 429), its channel was removed, its address is
// not allowed, or it failed MaxAttempts times. Retrying will not help.
var ErrGaveUp = errors.New("notify: delivery failed for good")

// Notifier delivers notifications. It is safe for concurrent use.
type Notifier struct {
	store  *store.Store
	mail   mail.Sender
	cfg    Config
	client *http.Client
}

// New returns a Notifier that records deliveries in st and sends email
// through sender (nil: email deliveries fail, saying email is not set up).
func New(st *store.Store, sender mail.Sender, cfg Config) *Notifier {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Notifier{store: st, mail: sender, cfg: cfg, client: newClient(cfg.AllowPrivate, cfg.Timeout)}
}

// With returns a Notifier that works through st: a request's store, fenced
// to its org, so that a request holds one connection, not two.
func (n *Notifier) With(st *store.Store) *Notifier {
	c := *n
	c.store = st
	return &c
}

// Queued reports whether deliveries go through the job queue rather than
// out at once.
func (n *Notifier) Queued() bool { return n.cfg.Enqueuer != nil }

// URL is path as an absolute URL under the base URL.
func (n *Notifier) URL(path string) string {
	if strings.HasPrefix(path, "https://") || strings.HasPrefix(path, "http://") {
		return path
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return n.cfg.BaseURL + path
}

// NewTest is a test notification for one channel of org ("": every
// channel): an org channel, or with budgetID a budget's own; email goes to
// to.
func NewTest(org store.Org, channel string, budgetID int64, to []string) Notification {
	t := Notification{
		Kind: KindTest, OrgID: org.ID, BudgetID: budgetID, Email: to,
		Subject: "Test notification from Burnrate",
		Text: fmt.Sprintf("This is a test from %s's notification settings in Burnrate. If you can read it, budget alerts "+
			"and digests will reach you here.", org.Name),
		Link:    "/settings/notifications",
		Payload: map[string]any{"org": org.Slug, "test": true},
	}
	if channel != "" {
		t.Channels = []string{channel}
	}
	return t
}

// Deliver records a delivery of nt for each channel it goes to and sends
// them: through the Enqueuer, or at once. A channel that already has a
// delivery with nt's Key gets no other; one of those still pending (never
// tried, as when enqueuing it failed) is handed on again. It returns the
// deliveries, as they stand after sending at once. An attempt that fails is
// recorded in its delivery, not returned as an error.
func (n *Notifier) Deliver(ctx context.Context, nt Notification) ([]store.Delivery, error) {
	switch nt.Kind {
	case KindBudgetAlert, KindDigest, KindConnection:
		if nt.Key == "" {
			return nil, errors.New("deliver: a notification needs a Key, to be sent once")
		}
	case KindTest:
		if nt.Key == "" {
			nt.Key = "test:" + randomHex(8)
		}
	default:
		return nil, fmt.Errorf("deliver: unknown kind %q", nt.Kind)
	}
	if nt.OrgID == 0 || nt.Subject == "" {
		return nil, errors.New("deliver: a notification needs an org and a subject")
	}
	if nt.Link != "" {
		nt.Link = n.URL(nt.Link)
	}
	wants := func(ch string) bool { return len(nt.Channels) == 0 || slices.Contains(nt.Channels, ch) }

	var news []store.NewDelivery
	if wants(store.ChannelEmail) && len(nt.Email) > 0 {
		body, err := json.Marshal(emailMessage(nt))
		if err != nil {
			return nil, fmt.Errorf("deliver: %w", err)
		}
		news = append(news, store.NewDelivery{Channel: store.ChannelEmail, Target: truncate(strings.Join(nt.Email, ", "), 300), Body: body})
	}
	chs, err := n.store.ChannelsFor(ctx, nt.OrgID, nt.BudgetID)
	if err != nil {
		return nil, fmt.Errorf("deliver: %w", err)
	}
	for _, ch := range chs {
		if !wants(ch.Kind) {
			continue
		}
		var body []byte
		switch ch.Kind {
		case store.ChannelSlack:
			body, err = slackBody(nt)
		case store.ChannelWebhook:
			body, err = webhookBody(nt, time.Now())
		}
		if err != nil {
			return nil, fmt.Errorf("deliver: %w", err)
		}
		news = append(news, store.NewDelivery{Channel: ch.Kind, ChannelID: ch.ID, Target: ch.URLMasked, Body: body})
	}

	var out []store.Delivery
	var errs []error
	for _, nd := range news {
		nd.Kind, nd.Subject, nd.DedupeKey = string(nt.Kind), truncate(nt.Subject, 300), nt.Key
		d, _, err := n.store.RecordDelivery(ctx, nt.OrgID, nd)
		if err != nil {
			return out, fmt.Errorf("deliver: %w", err)
		}
		if d.Status == store.DeliveryPending {
			d, err = n.dispatch(ctx, d)
			errs = append(errs, err)
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

// Retry sends orgID's delivery id again, through the Enqueuer or at once,
// unless it was sent. It returns the delivery as it stands after.
func (n *Notifier) Retry(ctx context.Context, orgID, id int64) (store.Delivery, error) {
	d, err := n.store.Delivery(ctx, orgID, id)
	if err != nil || d.Status == store.DeliverySent {
		return d, err
	}
	return n.dispatch(ctx, d)
}

// dispatch enqueues d, or sends it at once and returns it as it then is.
func (n *Notifier) dispatch(ctx context.Context, d store.Delivery) (store.Delivery, error) {
	if n.cfg.Enqueuer != nil {
		if err := n.cfg.Enqueuer.EnqueueDelivery(ctx, d.OrgID, d.ID); err != nil {
			return d, fmt.Errorf("enqueue delivery %d: %w", d.ID, err)
		}
		return d, nil
	}
	// The outcome is in the row; the error is for a job queue's retries,
	// which there are none of here.
	_ = n.DeliverOne(ctx, d.OrgID, d.ID)
	return n.store.Delivery(ctx, d.OrgID, d.ID)
}

// DeliverOne sends orgID's delivery id once, and records how it went: what
// a job worker calls. It is idempotent: a delivery already sent is not sent
// again (nil), and one another worker is sending now is left to it (an
// error, to look again later). It returns nil when the delivery was sent,
// an error wrapping ErrGaveUp when it failed for good (the worker should
// stop), and any other error when a later attempt may succeed. A delivery
// that is not found returns an error wrapping store.ErrNotFound, since the
// transaction that recorded it may not have committed yet.
func (n *Notifier) DeliverOne(ctx context.Context, orgID, id int64) error {
	d, claimed, err := n.store.ClaimDelivery(ctx, orgID, id, claimLease)
	if err != nil {
		return fmt.Errorf("deliver %d: %w", id, err)
	}
	if !claimed {
		if d.Status == store.DeliverySent {
			return nil
		}
		return fmt.Errorf("deliver %d: another worker is sending it", id)
	}
	res := n.attempt(ctx, d)
	result := store.DeliveryResult{Status: store.DeliverySent, ResponseCode: res.code, Error: truncate(res.msg, 500)}
	if res.err != nil {
		result.Status = store.DeliveryRetrying
		if res.permanent || d.Attempts >= n.cfg.MaxAttempts {
			result.Status = store.DeliveryFailed
		}
		if result.Error == "" {
			result.Error = truncate(res.err.Error(), 500)
		}
		n.cfg.Log.Warn("notification not delivered", slog.Int64("org_id", orgID), slog.Int64("delivery_id", id),
			slog.String("channel", d.Channel), slog.Int("attempt", d.Attempts), slog.Int("code", res.code),
			slog.String("status", result.Status), slog.String("error", result.Error))
	}
	// The outcome is recorded even if the caller's context ended meanwhile:
	// a send that happened must be marked sent, or a retry would repeat it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := n.store.FinishDelivery(rctx, orgID, id, d.Attempts, result); err != nil {
		return fmt.Errorf("deliver %d: record outcome: %w", id, err)
	}
	switch {
	case res.err == nil:
		return nil
	case result.Status == store.DeliveryFailed:
		return fmt.Errorf("deliver %d: %w: %s", id, ErrGaveUp, result.Error)
	default:
		return fmt.Errorf("deliver %d: %s", id, result.Error)
	}
}

// outcome is how one attempt went. msg is what is recorded and shown:
// never a URL, which may hold a credential.
type outcome struct {
	err       error
	permanent bool
	code      int
	msg       string
}

func failed(permanent bool, msg string) outcome {
	return outcome{err: errors.New(msg), permanent: permanent, msg: msg}
}

func (n *Notifier) attempt(ctx context.Context, d store.Delivery) outcome {
	if d.Channel == store.ChannelEmail {
		return n.sendEmail(ctx, d)
	}
	ch, err := n.store.NotificationChannel(ctx, d.OrgID, d.ChannelID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ch.Kind != d.Channel) {
		return failed(true, "the channel was removed")
	}
	if err != nil {
		return outcome{err: err, msg: "could not read the channel"}
	}
	target, err := n.channelURL(ch)
	if err != nil {
		return failed(true, err.Error())
	}
	header := http.Header{"Content-Type": {"application/json"}, "User-Agent": {"Burnrate-Notify/1"}}
	if ch.Kind == store.ChannelSlack {
		if err := n.CheckSlackURL(target); err != nil {
			return failed(true, err.Error())
		}
	} else {
		if err := n.CheckWebhookURL(target); err != nil {
			return failed(true, err.Error())
		}
		sec, err := n.store.WebhookSecret(ctx, d.OrgID)
		if errors.Is(err, store.ErrNotFound) {
			return failed(true, "the org has no webhook signing secret")
		}
		if err != nil {
			return outcome{err: err, msg: "could not read the signing secret"}
		}
		ts := time.Now().Unix()
		header.Set("Burnrate-Event", d.Kind)
		header.Set("Burnrate-Timestamp", fmt.Sprint(ts))
		header.Set("Burnrate-Signature", signatureHeader(sec, ts, d.Body))
	}
	return n.post(ctx, target, d.Body, header)
}

func (n *Notifier) sendEmail(ctx context.Context, d store.Delivery) outcome {
	if n.mail == nil && n.cfg.Mailer == nil {
		return failed(true, "email is not set up on this server")
	}
	var m mail.Message
	if err := json.Unmarshal(d.Body, &m); err != nil {
		return failed(true, "the stored message is unreadable")
	}
	ctx, cancel := context.WithTimeout(ctx, mailTimeout)
	defer cancel()
	if n.cfg.Mailer != nil {
		if err := n.cfg.Mailer.Mail(ctx, d.OrgID, d.Kind, m); err != nil {
			return outcome{err: err, msg: "outbox: " + err.Error()}
		}
		return outcome{}
	}
	if err := n.mail.Send(ctx, m); err != nil {
		return outcome{err: err, msg: "email: " + err.Error()}
	}
	return outcome{}
}

// emailMessage is nt as an email. The link goes at the end of the text
// unless the text has it already.
func emailMessage(nt Notification) mail.Message {
	text := nt.Text
	if nt.Link != "" && !strings.Contains(text, nt.Link) {
		text = strings.TrimRight(text, "\n") + "\n\nOpen in Burnrate: " + nt.Link + "\n"
	}
	return mail.Message{To: nt.Email, Subject: nt.Subject, Text: text, HTML: nt.HTML, Inline: nt.Inline, Headers: nt.Headers}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand panics on failure since Go 1.24)
	return hex.EncodeToString(b)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
