package web

import (
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

func (s *Server) handleOrgNew(c echo.Context) error {
	return render(c, http.StatusOK, views.NewOrgPage(s.shell(c, "New org", ""), views.OrgForm{}))
}

// handleOrgCreate makes an org owned by the user and switches to it.
func (s *Server) handleOrgCreate(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.OrgForm{Name: label.Clean(c.FormValue("name"))}
	if f.Name == "" || len(f.Name) > 100 {
		f.Error = "Give the org a name of at most 100 characters."
		return render(c, http.StatusUnprocessableEntity, views.NewOrgPage(s.shell(c, "New org", ""), f))
	}
	org, err := s.store.CreateOrg(ctx, f.Name, currentUser(c).ID)
	if err != nil {
		return err
	}
	if err := s.store.SetSessionOrg(ctx, currentSession(c).ID, org.ID); err != nil {
		return err
	}
	s.flash(c, "Created "+org.Name+".")
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

// handleOrgSwitch changes the org the session looks at, to one the user is
// a member of.
func (s *Server) handleOrgSwitch(c echo.Context) error {
	ctx := c.Request().Context()
	org, err := s.store.OrgBySlug(ctx, c.FormValue("slug"))
	if err != nil {
		return err
	}
	if _, err := s.store.Membership(ctx, org.ID, currentUser(c).ID); err != nil {
		return err // ErrNotFound: someone else's org looks like no org at all
	}
	if err := s.store.SetSessionOrg(ctx, currentSession(c).ID, org.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

func settingsForm(o *store.Org) views.SettingsForm {
	return views.SettingsForm{Name: o.Name, TimeZone: o.TimeZone, Currency: o.Currency, TeamTagKey: o.TeamTagKey, Errors: map[string]string{}}
}

func (s *Server) handleSettingsShow(c echo.Context) error {
	return render(c, http.StatusOK, views.SettingsPage(s.shell(c, "Settings", "settings"), settingsForm(currentOrg(c))))
}

var (
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	tagKeyRe   = regexp.MustCompile(`^[A-Za-z0-9_.:/@+=-]{1,128}$`)
)

func (s *Server) handleSettingsUpdate(c echo.Context) error {
	f := views.SettingsForm{
		Name:       label.Clean(c.FormValue("name")),
		TimeZone:   strings.TrimSpace(c.FormValue("time_zone")),
		Currency:   strings.ToUpper(strings.TrimSpace(c.FormValue("currency"))),
		TeamTagKey: strings.TrimSpace(c.FormValue("team_tag_key")),
		Errors:     map[string]string{},
	}
	if f.Name == "" || len(f.Name) > 100 {
		f.Errors["name"] = "Give the org a name of at most 100 characters."
	}
	if _, err := time.LoadLocation(f.TimeZone); err != nil || f.TimeZone == "" || f.TimeZone == "Local" {
		f.Errors["time_zone"] = "Use an IANA time zone such as Europe/Berlin or America/New_York."
	}
	if !currencyRe.MatchString(f.Currency) {
		f.Errors["currency"] = "Use a three-letter ISO 4217 code such as USD or EUR."
	}
	if !tagKeyRe.MatchString(f.TeamTagKey) {
		f.Errors["team_tag_key"] = "Use the tag key as it appears in your bills, e.g. team or cost-center."
	}
	sh := s.shell(c, "Settings", "settings")
	if len(f.Errors) > 0 {
		return render(c, http.StatusUnprocessableEntity, views.SettingsPage(sh, f))
	}
	before := currentOrg(c)
	var org store.Org
	err := s.db(c).InTx(c.Request().Context(), func(tx *store.Store) error {
		var err error
		org, err = tx.UpdateOrg(c.Request().Context(), before.ID, store.OrgUpdate{
			Name: f.Name, TimeZone: f.TimeZone, Currency: f.Currency, TeamTagKey: f.TeamTagKey,
		})
		if err != nil || org.TimeZone == before.TimeZone {
			return err
		}
		// A day on the dashboard is a day in the org's time zone: the
		// rollups are regrouped into the new days.
		return tx.RebuildDailySpend(c.Request().Context(), org.ID, org.Location())
	})
	if err != nil {
		return err
	}
	sh.Org = &org
	f.Saved = true
	return render(c, http.StatusOK, views.SettingsPage(sh, f))
}

var errLastOwner = echo.NewHTTPError(http.StatusConflict, "An org needs at least one owner: make someone else owner first.")
