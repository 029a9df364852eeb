package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// deliveriesShown is how many of the latest deliveries the page lists.
const deliveriesShown = 100

// channelLabels name the channels in messages.
var channelLabels = map[string]string{store.ChannelEmail: "email", store.ChannelSlack: "Slack", store.ChannelWebhook: "the webhook"}

// notificationsPage renders Settings → Notifications with v's form state
// (what was typed, what is wrong, a secret to show this once).
func (s *Server) notificationsPage(c echo.Context, status int, v views.NotificationsView) error {
	ctx := c.Request().Context()
	org := currentOrg(c)
	st := s.db(c)
	chs, err := st.NotificationChannels(ctx, org.ID)
	if err != nil {
		return err
	}
	for _, ch := range chs {
		switch {
		case ch.BudgetID != 0:
			v.Overrides = append(v.Overrides, ch)
		case ch.Kind == store.ChannelSlack:
			v.Slack = &ch
		case ch.Kind == store.ChannelWebhook:
			v.Webhook = &ch
		}
	}
	sec, err := st.WebhookSecret(ctx, org.ID)
	switch {
	case err == nil:
		v.Secret = &sec
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if v.Deliveries, err = st.Deliveries(ctx, org.ID, deliveriesShown); err != nil {
		return err
	}
	if v.Errors == nil {
		v.Errors = map[string]string{}
	}
	v.Email = currentUser(c).Email
	v.Queued = s.notifier.Queued()
	return render(c, status, views.NotificationsPage(s.shell(c, "Notifications", "settings"), v))
}

func (s *Server) handleNotifications(c echo.Context) error {
	return s.notificationsPage(c, http.StatusOK, views.NotificationsView{})
}

// sealURL is a Slack or webhook URL as stored: sealed under SECRET_KEY,
// like connection credentials, when the server has one; pages show only
// its mask (host and last four characters) from then on. Without a key it
// is stored in clear and sealed at the next start with one
// (docs/notifications.md).
func (s *Server) sealURL(orgID int64, url string) string {
	if s.connections.Key == nil {
		return url
	}
	return s.connections.Key.SealChannel(orgID, url)
}

// handleSlackSave sets the org's Slack incoming webhook.
func (s *Server) handleSlackSave(c echo.Context) error {
	url := strings.TrimSpace(c.FormValue("url"))
	if err := s.notifier.CheckSlackURL(url); err != nil {
		return s.notificationsPage(c, http.StatusUnprocessableEntity, views.NotificationsView{
			SlackURL: url, Errors: map[string]string{"slack": capitalise(err.Error()) + "."},
		})
	}
	ch, err := s.db(c).SetNotificationChannel(c.Request().Context(), currentOrg(c).ID, 0, store.ChannelSlack, s.sealURL(currentOrg(c).ID, url), notify.Mask(url), currentUser(c).ID)
	if err != nil {
		return err
	}
	s.flash(c, "Slack webhook saved ("+ch.URLMasked+"). Send a test to check it.")
	return c.Redirect(http.StatusSeeOther, "/settings/notifications")
}

// handleWebhookSave sets the org's webhook. The org's signing secret is
// made with its first webhook and shown this once.
func (s *Server) handleWebhookSave(c echo.Context) error {
	url := strings.TrimSpace(c.FormValue("url"))
	if err := s.notifier.CheckWebhookURL(url); err != nil {
		return s.notificationsPage(c, http.StatusUnprocessableEntity, views.NotificationsView{
			WebhookURL: url, Errors: map[string]string{"webhook": capitalise(err.Error()) + "."},
		})
	}
	ctx := c.Request().Context()
	org := currentOrg(c)
	secret := notify.NewWebhookSecret()
	var made bool
	err := s.db(c).InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.SetNotificationChannel(ctx, org.ID, 0, store.ChannelWebhook, s.sealURL(org.ID, url), notify.Mask(url), currentUser(c).ID); err != nil {
			return err
		}
		var err error
		made, err = tx.CreateWebhookSecret(ctx, org.ID, secret)
		return err
	})
	if err != nil {
		return err
	}
	if made {
		return s.notificationsPage(c, http.StatusCreated, views.NotificationsView{NewSecret: secret})
	}
	s.flash(c, "Webhook saved. It is signed with the org's secret, as before.")
	return c.Redirect(http.StatusSeeOther, "/settings/notifications")
}

// handleSecretRotate replaces the org's webhook signing secret and shows
// the new one this once; the old one keeps signing alongside it for a day.
func (s *Server) handleSecretRotate(c echo.Context) error {
	secret := notify.NewWebhookSecret()
	if err := s.db(c).RotateWebhookSecret(c.Request().Context(), currentOrg(c).ID, secret, notify.RotationOverlap); err != nil {
		return err
	}
	return s.notificationsPage(c, http.StatusCreated, views.NotificationsView{NewSecret: secret, Rotated: true})
}

func (s *Server) handleChannelDelete(c echo.Context) error {
	ch, err := s.pathChannel(c)
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteNotificationChannel(c.Request().Context(), currentOrg(c).ID, ch.ID); err != nil {
		return err
	}
	s.flash(c, capitalise(channelLabels[ch.Kind])+" channel "+ch.URLMasked+" removed.")
	return c.Redirect(http.StatusSeeOther, "/settings/notifications")
}

// handleChannelTest sends a test notification over one channel, the org's
// or a budget's.
func (s *Server) handleChannelTest(c echo.Context) error {
	ch, err := s.pathChannel(c)
	if err != nil {
		return err
	}
	return s.sendTest(c, notify.NewTest(*currentOrg(c), ch.Kind, ch.BudgetID, nil))
}

// handleEmailTest sends a test email to the admin who asks for it.
func (s *Server) handleEmailTest(c echo.Context) error {
	return s.sendTest(c, notify.NewTest(*currentOrg(c), store.ChannelEmail, 0, []string{currentUser(c).Email}))
}

// sendTest delivers a test notification as any other is delivered: through
// the job queue when there is one, else at once, which the HTTP timeout
// bounds. Either way the Deliveries list shows how it went.
func (s *Server) sendTest(c echo.Context, nt notify.Notification) error {
	ds, err := s.notifier.With(s.db(c)).Deliver(c.Request().Context(), nt)
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return echo.NewHTTPError(http.StatusNotFound, "There is no such channel to test.")
	}
	s.flash(c, deliveryMessage("Test", ds[0]))
	return c.Redirect(http.StatusSeeOther, "/settings/notifications")
}

// handleDeliveryRetry sends a delivery that failed again.
func (s *Server) handleDeliveryRetry(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	d, err := s.notifier.With(s.db(c)).Retry(c.Request().Context(), currentOrg(c).ID, id)
	if err != nil {
		return err
	}
	s.flash(c, deliveryMessage("Retry", d))
	return c.Redirect(http.StatusSeeOther, "/settings/notifications")
}

func deliveryMessage(what string, d store.Delivery) string {
	to := channelLabels[d.Channel] + " (" + d.Target + ")"
	switch d.Status {
	case store.DeliverySent:
		return what + " sent to " + to + "."
	case store.DeliveryPending, store.DeliverySending:
		return what + " queued for " + to + "; the list below shows how it goes."
	default:
		return what + " to " + to + " failed: " + d.LastError + "."
	}
}

// pathChannel is the notification channel named by :id, in the current org.
func (s *Server) pathChannel(c echo.Context) (store.NotificationChannel, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return store.NotificationChannel{}, err
	}
	return s.db(c).NotificationChannel(c.Request().Context(), currentOrg(c).ID, id)
}

// budgetChannelForm fills the form's per-budget channel fields: what the
// budget has, masked.
func (s *Server) budgetChannelForm(ctx context.Context, st *store.Store, orgID int64, f *views.BudgetForm) error {
	if f.ID == 0 {
		return nil
	}
	chs, err := st.BudgetChannels(ctx, orgID, f.ID)
	if err != nil {
		return err
	}
	f.SlackMasked, f.WebhookMasked = chs[store.ChannelSlack].URLMasked, chs[store.ChannelWebhook].URLMasked
	return nil
}

// readBudgetChannels reads and checks the budget form's channel fields.
func (s *Server) readBudgetChannels(c echo.Context, f *views.BudgetForm) error {
	f.SlackURL, f.WebhookURL = strings.TrimSpace(c.FormValue("slack_url")), strings.TrimSpace(c.FormValue("webhook_url"))
	f.SlackRemove, f.WebhookRemove = c.FormValue("slack_remove") != "", c.FormValue("webhook_remove") != ""
	if f.SlackURL != "" {
		if err := s.notifier.CheckSlackURL(f.SlackURL); err != nil {
			f.Errors["slack_url"] = capitalise(err.Error()) + "."
		}
	}
	if f.WebhookURL != "" {
		if err := s.notifier.CheckWebhookURL(f.WebhookURL); err != nil {
			f.Errors["webhook_url"] = capitalise(err.Error()) + "."
		} else if _, err := s.db(c).WebhookSecret(c.Request().Context(), currentOrg(c).ID); errors.Is(err, store.ErrNotFound) {
			f.Errors["webhook_url"] = "Add the org's webhook under Settings → Notifications first: every webhook is signed with the org's secret, made there."
		} else if err != nil {
			return err
		}
	}
	return nil
}

// saveBudgetChannels sets or removes budgetID's own channels as the form
// asks; fields left empty keep what the budget has.
func (s *Server) saveBudgetChannels(ctx context.Context, st *store.Store, orgID, budgetID, userID int64, f views.BudgetForm) error {
	for _, ch := range []struct {
		kind, url string
		remove    bool
	}{{store.ChannelSlack, f.SlackURL, f.SlackRemove}, {store.ChannelWebhook, f.WebhookURL, f.WebhookRemove}} {
		var err error
		switch {
		case ch.url != "":
			_, err = st.SetNotificationChannel(ctx, orgID, budgetID, ch.kind, s.sealURL(orgID, ch.url), notify.Mask(ch.url), userID)
		case ch.remove:
			err = st.DeleteBudgetChannel(ctx, orgID, budgetID, ch.kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
