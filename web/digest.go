package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// previewCSP is the policy of the digest preview's own response: the
// email's HTML carries its CSS in style attributes (mail clients drop style
// sheets), which the app's policy forbids, so the preview is served alone
// with inline styles allowed, no script at all, its chart as a data: URL,
// and sandboxed, so that even opened outside its frame it runs nothing and
// reaches nothing of the app. Only the app's own pages may frame it.
const previewCSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox; frame-ancestors 'self'"

// digestDay parses the preview's date, yesterday in the org's time zone
// when none is given. Days before 2000 or more than a year ahead are
// refused: nothing useful is there, and each preview runs the queries.
func (s *Server) digestDay(c echo.Context) (time.Time, string) {
	org := currentOrg(c)
	yesterday := digest.Yesterday(s.now(), org.Location())
	q := c.QueryParam("date")
	if q == "" {
		return yesterday, ""
	}
	d, err := time.Parse(time.DateOnly, q)
	if err != nil || d.Year() < 2000 || d.After(yesterday.AddDate(1, 0, 0)) {
		return yesterday, "Choose a day (YYYY-MM-DD) from 2000 to a year from now."
	}
	return d, ""
}

func (s *Server) digestPage(c echo.Context, status int, v views.DigestView) error {
	ctx := c.Request().Context()
	org, st := currentOrg(c), s.db(c)
	if v.Errors == nil {
		v.Errors = map[string]string{}
	}
	if v.Settings.OrgID == 0 {
		set, err := st.DigestSettings(ctx, org.ID)
		if err != nil {
			return err
		}
		v.Settings = set
	}
	unsub, err := st.DigestUnsubscribed(ctx, org.ID, currentUser(c).ID)
	if err != nil {
		return err
	}
	v.Unsubscribed = unsub
	day, msg := s.digestDay(c)
	if msg != "" {
		v.Errors["date"] = msg
		status = http.StatusUnprocessableEntity
	}
	d, err := digest.Build(ctx, st, *org, day, s.now())
	if err != nil {
		return err
	}
	v.Date, v.Subject, v.Over, v.Text = d.Date(), digest.Subject(d), d.Over(), digest.Text(d, s.baseURL)
	v.PreviewURL = "/settings/digest/preview?date=" + d.Date()
	v.OffOnPlan = !s.billing.Cfg().Notifies(*org)
	return render(c, status, views.DigestPage(s.shell(c, "Digest", "settings"), v))
}

// handleDigestSettings is Settings → Digest: everyone sees the settings
// and previews any day; admins change the settings.
func (s *Server) handleDigestSettings(c echo.Context) error {
	return s.digestPage(c, http.StatusOK, views.DigestView{})
}

// handleDigestSave stores the digest settings. The hour is one of the
// form's 24 values, looked up rather than parsed.
func (s *Server) handleDigestSave(c echo.Context) error {
	org := currentOrg(c)
	set := store.DigestSettings{OrgID: org.ID, Enabled: c.FormValue("enabled") == "1",
		When: c.FormValue("when"), Recipients: c.FormValue("recipients"), SendHour: -1, WaitUntilHour: -1}
	errs := map[string]string{}
	for h := range 24 {
		if c.FormValue("send_hour") == strconv.Itoa(h) {
			set.SendHour = h
		}
		if c.FormValue("wait_until_hour") == strconv.Itoa(h) {
			set.WaitUntilHour = h
		}
	}
	if set.SendHour < 0 {
		errs["send_hour"] = "Choose an hour from 00:00 to 23:00."
		set.SendHour = store.DefaultDigestSettings(org.ID).SendHour
	}
	if set.WaitUntilHour < 0 {
		// A form from before the setting existed: no waiting.
		set.WaitUntilHour = set.SendHour
		if c.FormValue("wait_until_hour") != "" {
			errs["wait_until_hour"] = "Choose an hour from 00:00 to 23:00."
		}
	}
	if set.When != store.DigestWhenOver && set.When != store.DigestWhenAlways {
		errs["when"] = "Choose when the digest is sent."
	}
	if set.Recipients != store.DigestToAdmins && set.Recipients != store.DigestToMembers {
		errs["recipients"] = "Choose who gets the digest."
	}
	if len(errs) > 0 {
		return s.digestPage(c, http.StatusUnprocessableEntity, views.DigestView{Settings: set, Errors: errs})
	}
	if err := s.db(c).SaveDigestSettings(c.Request().Context(), set, currentUser(c).ID); err != nil {
		return err
	}
	s.flash(c, "Digest settings saved.")
	return c.Redirect(http.StatusSeeOther, "/settings/digest")
}

// handleDigestSubscription unsubscribes the viewer from the org's digest,
// or with subscribe=1 subscribes them again.
func (s *Server) handleDigestSubscription(c echo.Context) error {
	ctx := c.Request().Context()
	org, user, st := currentOrg(c), currentUser(c), s.db(c)
	var err error
	if c.FormValue("subscribe") == "1" {
		err = st.ResubscribeDigest(ctx, org.ID, user.ID)
		s.flash(c, "You will get the daily digest again.")
	} else {
		err = st.UnsubscribeDigest(ctx, org.ID, user.ID)
		s.flash(c, "You will no longer get this org's daily digest.")
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/settings/digest")
}

// handleDigestPreview is the digest email of a day, alone, for the frame
// on Settings → Digest, under previewCSP.
func (s *Server) handleDigestPreview(c echo.Context) error {
	day, msg := s.digestDay(c)
	if msg != "" {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, msg)
	}
	d, err := digest.Build(c.Request().Context(), s.db(c), *currentOrg(c), day, s.now())
	if err != nil {
		return err
	}
	html, err := digest.PreviewHTML(d, s.baseURL)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", previewCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	return c.HTML(http.StatusOK, html)
}

// unsubscribeRequest is the org and user an unsubscribe link names, or an
// error page for a link that is not valid.
func (s *Server) unsubscribeRequest(c echo.Context) (store.Org, string, int64, error) {
	ctx := c.Request().Context()
	invalid := echo.NewHTTPError(http.StatusNotFound, "This unsubscribe link is not valid. Settings → Digest in Burnrate unsubscribes you too.")
	token := c.QueryParam("token")
	key, err := digest.UnsubscribeKey(ctx, s.store)
	if err != nil {
		return store.Org{}, "", 0, err
	}
	orgID, userID, ok := digest.VerifyUnsubscribe(key, token)
	if !ok {
		return store.Org{}, "", 0, invalid
	}
	org, err := s.store.Org(ctx, orgID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Org{}, "", 0, invalid
	}
	if err != nil {
		return store.Org{}, "", 0, err
	}
	user, err := s.store.User(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Org{}, "", 0, invalid
	}
	if err != nil {
		return store.Org{}, "", 0, err
	}
	return org, user.Email, userID, nil
}

// handleUnsubscribeShow asks to confirm an unsubscribe link: mail scanners
// open links, and a GET must not unsubscribe anyone.
func (s *Server) handleUnsubscribeShow(c echo.Context) error {
	org, email, _, err := s.unsubscribeRequest(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.UnsubscribePage(s.shell(c, "Unsubscribe", ""), views.UnsubscribeView{
		OrgName: org.Name, Email: email, Action: "/digest/unsubscribe?token=" + url.QueryEscape(c.QueryParam("token")),
	}))
}

// handleUnsubscribe unsubscribes the link's user from the link's org's
// digest: the one-click POST of RFC 8058 that mail clients send (body
// List-Unsubscribe=One-Click), or the confirm page's button. The signed
// token is the authority: no log-in, no CSRF token (a forged request could
// only do what the link's owner asked for).
func (s *Server) handleUnsubscribe(c echo.Context) error {
	org, email, userID, err := s.unsubscribeRequest(c)
	if err != nil {
		return err
	}
	err = s.store.Fenced(c.Request().Context(), org.ID, 0, func(st *store.Store) error {
		return st.UnsubscribeDigest(c.Request().Context(), org.ID, userID)
	})
	// A member removed since gets no digest anyway.
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return render(c, http.StatusOK, views.UnsubscribePage(s.shell(c, "Unsubscribed", ""), views.UnsubscribeView{
		OrgName: org.Name, Email: email, Done: true,
	}))
}
