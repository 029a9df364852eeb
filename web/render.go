package web

import (
	"context"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/web/views"
)

// render writes component with status. It renders into a buffer first, so
// that a template error becomes a clean error page rather than half a page.
func render(c echo.Context, status int, component templ.Component) error {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := component.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// shell gathers what the layout needs, and takes the session's flash
// message (shown once).
func (s *Server) shell(c echo.Context, title, active string) views.Shell {
	sh := views.Shell{
		Title:   title,
		Active:  active,
		User:    currentUser(c),
		Org:     currentOrg(c),
		Role:    currentRole(c),
		CSRF:    csrfToken(c),
		BaseURL: s.baseURL,
	}
	ctx := c.Request().Context()
	if sh.User != nil {
		// The org switcher, through the request's own connection (the fence
		// lets a user read their own orgs); on failure the page still
		// renders without it.
		sh.Orgs, _ = s.db(c).OrgsForUser(ctx, sh.User.ID)
	}
	sh.Billing = s.billingBanner(c)
	if sess := currentSession(c); sess != nil && sess.Flash != "" {
		sh.Flash = sess.Flash
		_ = s.db(c).SetFlash(context.WithoutCancel(ctx), sess.ID, "")
		sess.Flash = ""
	}
	return sh
}

func csrfToken(c echo.Context) string {
	t, _ := c.Get("csrf").(string)
	return t
}

// flash leaves a message for the next page the session sees.
func (s *Server) flash(c echo.Context, msg string) {
	if sess := currentSession(c); sess != nil {
		_ = s.db(c).SetFlash(c.Request().Context(), sess.ID, msg)
	}
}
