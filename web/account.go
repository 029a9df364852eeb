package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/password"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

func (s *Server) handleAccountShow(c echo.Context) error {
	return render(c, http.StatusOK, views.AccountPage(s.shell(c, "Your account", ""), views.PasswordForm{}))
}

// handleAccountPassword changes the user's password, given the current
// one, and ends every session they have: a password change is what someone
// does when they fear another has it. This browser gets a fresh session.
func (s *Server) handleAccountPassword(c echo.Context) error {
	ctx := c.Request().Context()
	user, sess := currentUser(c), currentSession(c)
	current, next := c.FormValue("current_password"), c.FormValue("new_password")
	f := views.PasswordForm{Errors: map[string]string{}}
	page := func(status int) error {
		return render(c, status, views.AccountPage(s.shell(c, "Your account", ""), f))
	}
	if msg := password.Problem(next); msg != "" {
		f.Errors["new_password"] = msg
	} else if c.FormValue("confirm_password") != next {
		f.Errors["confirm_password"] = "The two new passwords differ."
	}
	// Checking the current password is a log-in attempt, counted and
	// limited as one, so that a borrowed session cannot be used to guess it.
	attempt, err := s.store.BeginLoginAttempt(ctx, loginWindow, loginLimits(c, user.Email)...)
	if errors.Is(err, store.ErrTooManyAttempts) {
		f.Error = "Too many wrong passwords. Wait 15 minutes and try again."
		return page(http.StatusTooManyRequests)
	}
	if err != nil {
		return err
	}
	if !password.Check(user.PasswordHash, current) {
		f.Errors["current_password"] = "That is not your current password."
		return page(http.StatusUnprocessableEntity)
	}
	if err := s.store.LoginSucceeded(ctx, attempt, loginEmailKey(user.Email)); err != nil {
		return err
	}
	if len(f.Errors) > 0 {
		return page(http.StatusUnprocessableEntity)
	}
	hash, err := password.Hash(next)
	if err != nil {
		return err
	}
	var cookie string
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		if err := tx.SetPassword(ctx, user.ID, hash); err != nil {
			return err
		}
		if _, err := tx.DeleteUserSessions(ctx, user.ID, 0); err != nil {
			return err
		}
		// A reset link mailed before the change must not undo it.
		if err := tx.DeletePasswordResets(ctx, user.ID); err != nil {
			return err
		}
		fresh, value, err := tx.CreateSession(ctx, user.ID, sess.OrgID, c.Request().UserAgent())
		if err != nil {
			return err
		}
		cookie = value
		return tx.SetFlash(ctx, fresh.ID, "Password changed. Every other browser has been logged out.")
	})
	if err != nil {
		return err
	}
	s.setSessionCookie(c, cookie)
	return c.Redirect(http.StatusSeeOther, "/account")
}

// handleAccountLogoutEverywhere ends every session the user has, this one
// included.
func (s *Server) handleAccountLogoutEverywhere(c echo.Context) error {
	if _, err := s.store.DeleteUserSessions(c.Request().Context(), currentUser(c).ID, 0); err != nil {
		return err
	}
	s.clearSessionCookie(c)
	return c.Redirect(http.StatusSeeOther, "/login")
}
