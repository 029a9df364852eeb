package digest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/store"
)

// Outcome is what Send did.
type Outcome struct {
	Sent   bool
	Reason string // why not, when not sent
	// Waiting is set when the digest waits for the day's data: not sent
	// yet, to be sent again until Plan.WaitUntil.
	Waiting    bool
	Digest     Digest
	Deliveries []store.Delivery // new or found, every channel and recipient
}

// Plan is how a digest goes out: When is store.DigestWhenOver or
// store.DigestWhenAlways; until WaitUntil (zero: not at all) it waits for
// the day's data, and is not sent while some source has not delivered
// all of the day.
type Plan struct {
	When      string
	WaitUntil time.Time
}

// WaitUntil is until when the digest of day waits for its data under set:
// the wait-until hour of the morning after day, in loc; zero when that
// hour is not after the send hour (no waiting). See docs/digest.md,
// "Waiting for yesterday's data".
func WaitUntil(set store.DigestSettings, day time.Time, loc *time.Location) time.Time {
	if set.WaitUntilHour <= set.SendHour {
		return time.Time{}
	}
	next := day.AddDate(0, 0, 1)
	return time.Date(next.Year(), next.Month(), next.Day(), set.WaitUntilHour, 0, 0, 0, loc)
}

// Send builds org's digest for day, as it reads at now, and, when there is something to say,
// delivers it through n: by email to each of the org's digest recipients
// (a message each, with a personal unsubscribe link), and once to the
// org's Slack and webhook channels. p.When is store.DigestWhenOver (send
// only when Digest.Over) or store.DigestWhenAlways (send every day that
// spent anything, has something over, or has data missing, which it
// names). Before p.WaitUntil, a digest whose day is not all in waits
// (Outcome.Waiting) rather than go out. Nothing goes out when the org
// turned its digest off.
//
// It is what the daily job calls, and may run any number of times for a
// day: each delivery has a key made from the day (notify.DigestKey, and
// the recipient for email), so each channel and person gets the digest of
// a day once. st must not be fenced: it reads the install's unsubscribe
// key.
func Send(ctx context.Context, st *store.Store, n *notify.Notifier, org store.Org, day, now time.Time, p Plan) (Outcome, error) {
	set, err := st.DigestSettings(ctx, org.ID)
	if err != nil {
		return Outcome{}, fmt.Errorf("digest: %w", err)
	}
	if !set.Enabled {
		return Outcome{Reason: "the org's digest is off"}, nil
	}
	d, err := Build(ctx, st, org, day, now)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Digest: d}
	switch {
	case !d.Data.Complete() && now.Before(p.WaitUntil):
		out.Waiting, out.Reason = true, "waiting for the day's data until "+p.WaitUntil.In(org.Location()).Format("15:04")
		return out, nil
	case p.When == store.DigestWhenOver && !d.Over():
		out.Reason = "nothing is over"
		return out, nil
	case !d.Over() && len(d.Spent()) == 0 && d.Data.Complete():
		out.Reason = "nothing was spent"
		return out, nil
	}
	recipients, err := st.DigestRecipients(ctx, org.ID, set.Recipients)
	if err != nil {
		return out, fmt.Errorf("digest: %w", err)
	}
	key, err := UnsubscribeKey(ctx, st)
	if err != nil {
		return out, fmt.Errorf("digest: %w", err)
	}
	base := strings.TrimSuffix(n.URL("/"), "/")
	r, err := newRenderer(d, base)
	if err != nil {
		return out, err
	}
	var nts []notify.Notification
	for _, p := range recipients {
		nt, err := r.render(UnsubscribeURL(base, UnsubscribeToken(key, org.ID, p.UserID)))
		if err != nil {
			return out, err
		}
		nt.Key += ":user=" + strconv.FormatInt(p.UserID, 10)
		nt.Email, nt.Channels = []string{p.Email}, []string{store.ChannelEmail}
		nts = append(nts, nt)
	}
	nt, err := r.render("")
	if err != nil {
		return out, err
	}
	nt.Channels = []string{store.ChannelSlack, store.ChannelWebhook}
	nts = append(nts, nt)
	for _, nt := range nts {
		ds, err := n.Deliver(ctx, nt)
		out.Deliveries = append(out.Deliveries, ds...)
		if err != nil {
			return out, fmt.Errorf("digest: %w", err)
		}
	}
	out.Sent = true
	return out, nil
}
