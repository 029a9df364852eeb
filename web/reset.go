package web

import (
	"errors"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/account"
	"github.com/burnrate/burnrate/password"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// Password reset request limits, per hour, counted in Postgres with the
// log-in failures (under keys of their own, so that asking for resets
// never locks anyone out of logging in): each request mails someone, so
// an address gets few, and one client cannot mail many addresses.
const (
	resetWindow          = time.Hour
	maxResetsPerEmail    = 3
	maxResetsPerClient   = 20
	maxSignupNoticesHour = 1
	maxSignupLinksHour   = 3
)

var errResetLink = echo.NewHTTPError(http.StatusNotFound,
	"This password reset link no longer works: it was used, or is older than an hour. Ask for a new one under Log in → Forgot password?")

func (s *Server) handleForgotShow(c echo.Context) error {
	f := views.ForgotForm{MailOff: !s.mailConfigured()}
	return render(c, http.StatusOK, views.ForgotPasswordPage(s.shell(c, "Reset your password", ""), f))
}

// handleForgot asks for a reset link to be mailed. The answer is the same,
// and the work the same (count the request, enqueue a job), whether or not
// the address has an account: the job finds out, out of sight.
func (s *Server) handleForgot(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.ForgotForm{Email: strings.TrimSpace(c.FormValue("email")), MailOff: !s.mailConfigured()}
	page := func(status int) error {
		return render(c, status, views.ForgotPasswordPage(s.shell(c, "Reset your password", ""), f))
	}
	if addr, err := mail.ParseAddress(f.Email); err != nil || addr.Address != f.Email {
		f.Error = "Enter an email address like ann@example.com."
		return page(http.StatusUnprocessableEntity)
	}
	_, err := s.store.BeginLoginAttempt(ctx, resetWindow,
		store.LoginLimit{Key: "reset:" + loginEmailKey(f.Email), Max: maxResetsPerEmail},
		store.LoginLimit{Key: "reset:" + clientKey(c.RealIP()), Max: maxResetsPerClient})
	if errors.Is(err, store.ErrTooManyAttempts) {
		f.Error = "Too many reset requests. Wait an hour and try again."
		return page(http.StatusTooManyRequests)
	}
	if err != nil {
		return err
	}
	if err := account.RequestPasswordReset(ctx, s.queue, s.store, f.Email); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ResetRequestedPage(s.shell(c, "Check your email", ""), f.Email))
}

// handleResetShow is where a reset link lands. Showing the form does not use
// the link up (mail scanners open links); setting the password does.
func (s *Server) handleResetShow(c echo.Context) error {
	token := c.Param("token")
	u, err := s.store.PasswordResetUser(c.Request().Context(), token)
	if errors.Is(err, store.ErrNotFound) {
		return errResetLink
	}
	if err != nil {
		return err
	}
	f := views.ResetForm{Email: u.Email, Token: token, Errors: map[string]string{}}
	return render(c, http.StatusOK, views.ResetPasswordPage(s.shell(c, "Choose a new password", ""), f))
}

// handleReset sets the new password, uses the link up, ends every session
// the account had, and logs this browser in afresh.
func (s *Server) handleReset(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	u, err := s.store.PasswordResetUser(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return errResetLink
	}
	if err != nil {
		return err
	}
	f := views.ResetForm{Email: u.Email, Token: token, Errors: map[string]string{}}
	next := c.FormValue("new_password")
	if msg := password.Problem(next); msg != "" {
		f.Errors["new_password"] = msg
	} else if c.FormValue("confirm_password") != next {
		f.Errors["confirm_password"] = "The two passwords differ."
	}
	if len(f.Errors) > 0 {
		return render(c, http.StatusUnprocessableEntity, views.ResetPasswordPage(s.shell(c, "Choose a new password", ""), f))
	}
	hash, err := password.Hash(next)
	if err != nil {
		return err
	}
	u, err = s.store.ResetPassword(ctx, token, hash)
	if errors.Is(err, store.ErrNotFound) {
		return errResetLink // used by a request that got there first
	}
	if err != nil {
		return err
	}
	var orgID int64
	if orgs, err := s.store.OrgsForUser(ctx, u.ID); err != nil {
		return err
	} else if len(orgs) > 0 {
		orgID = orgs[0].ID
	}
	if old := currentSession(c); old != nil {
		if err := s.store.DeleteSession(ctx, old.ID); err != nil {
			return err
		}
	}
	fresh, cookie, err := s.store.CreateSession(ctx, u.ID, orgID, c.Request().UserAgent())
	if err != nil {
		return err
	}
	if err := s.store.SetFlash(ctx, fresh.ID, "Password changed. Every other browser has been logged out."); err != nil {
		return err
	}
	s.setSessionCookie(c, cookie)
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

// handleMailShow is the org's outbox, for its admins.
func (s *Server) handleMailShow(c echo.Context) error {
	mails, err := s.db(c).OutboxMails(c.Request().Context(), currentOrg(c).ID, 200)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.MailPage(s.shell(c, "Mail", "settings"), mails, s.mailConfigured()))
}
