package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/password"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// Log-in rate limits: failures counted per email and per client address over
// a sliding window, across every app instance (they are kept in Postgres).
// Attempts are counted before the password is checked, so that concurrent
// guesses cannot all get in under the limit.
const (
	loginWindow         = 15 * time.Minute
	maxFailuresPerEmail = 10
	maxFailuresPerIP    = 50
)

func (s *Server) handleHome(c echo.Context) error {
	if currentUser(c) != nil {
		return c.Redirect(http.StatusSeeOther, "/dashboard")
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

func (s *Server) handleSignupShow(c echo.Context) error {
	f := views.SignupForm{InviteToken: c.QueryParam("invite"), Email: c.QueryParam("email")}
	return render(c, http.StatusOK, views.SignupPage(s.shell(c, "Sign up", ""), f))
}

// handleSignup creates the account, its first org (or joins the invite's
// org), logs in, and lands on the dashboard. For an email that already has
// an account the answer looks the same, without the log-in.
func (s *Server) handleSignup(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.SignupForm{
		Name:        label.Clean(c.FormValue("name")),
		Email:       strings.TrimSpace(c.FormValue("email")),
		OrgName:     label.Clean(c.FormValue("org_name")),
		InviteToken: c.FormValue("invite"),
		Errors:      map[string]string{},
	}
	pw := c.FormValue("password")
	if f.Name == "" {
		f.Errors["name"] = "Tell us your name."
	}
	if addr, err := mail.ParseAddress(f.Email); err != nil || addr.Address != f.Email {
		f.Errors["email"] = "Enter an email address like ann@example.com."
	} else if label.MixedScriptDomain(f.Email) {
		f.Errors["email"] = lookalikeDomain
	}
	if msg := password.Problem(pw); msg != "" {
		f.Errors["password"] = msg
	}
	var invite *store.Invite
	if f.InviteToken != "" {
		inv, err := s.store.InviteByToken(ctx, f.InviteToken)
		if errors.Is(err, store.ErrNotFound) {
			f.Error = "This invite link is no longer valid: it was used, withdrawn, or is older than 7 days. Ask for a new one."
			f.InviteToken = ""
		} else if err != nil {
			return err
		} else if !strings.EqualFold(inv.Email, f.Email) {
			f.Errors["email"] = inviteForOther(inv.Email, f.Email)
		} else {
			invite = &inv
		}
	}
	if f.OrgName == "" && invite == nil {
		f.OrgName = f.Name + "'s team"
	}
	if len(f.Errors) > 0 || f.Error != "" {
		return render(c, http.StatusUnprocessableEntity, views.SignupPage(s.shell(c, "Sign up", ""), f))
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	// Where mail goes out, a sign-up without an invite answers the same
	// whether or not the address has an account: "check your inbox". A
	// new address gets the link that makes the account; one with an
	// account gets the notice. Logging in at once, as below, would tell a
	// stranger which it was (a session for one, none for the other).
	if invite == nil && s.mailConfigured() {
		s.signupByMail(ctx, store.NewSignup{Email: f.Email, Name: f.Name, OrgName: f.OrgName, PasswordHash: hash})
		return c.Redirect(http.StatusSeeOther, "/signup/sent")
	}
	var user store.User
	var orgID int64
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		var err error
		user, err = tx.CreateUser(ctx, f.Email, f.Name, hash)
		if err != nil {
			return err
		}
		if invite != nil {
			inv, err := tx.AcceptInvite(ctx, f.InviteToken, user.ID)
			orgID = inv.OrgID
			return err
		}
		org, err := tx.CreateOrg(ctx, f.OrgName, user.ID)
		orgID = org.ID
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		// Saying "this email has an account" would tell anyone whose
		// address is registered. Answer as for a new account instead (the
		// same status and redirect, but no session: the dashboard sends
		// them on to log in), and tell the address's owner.
		s.noteSignupForExistingAccount(ctx, f.Email)
		return c.Redirect(http.StatusSeeOther, "/dashboard")
	}
	if err != nil {
		return err
	}
	if err := s.startSession(c, user.ID, orgID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

// lookalikeDomain refuses an address whose domain mixes scripts, as
// lookalike domains do (label.MixedScriptDomain).
const lookalikeDomain = "The address's domain mixes alphabets (a Cyrillic or Greek letter among Latin ones, say), " +
	"as lookalike domains do. Type it again with one alphabet."

// signupByMail mails n's address the link that finishes its sign-up, or,
// when the address has an account, the notice that someone tried. Either
// way the page says the same; failures are logged, not shown. Links are
// limited to maxSignupLinksHour an address an hour, as notices are.
func (s *Server) signupByMail(ctx context.Context, n store.NewSignup) {
	if _, err := s.store.UserByEmail(ctx, n.Email); err == nil {
		s.noteSignupForExistingAccount(ctx, n.Email)
		return
	} else if !errors.Is(err, store.ErrNotFound) {
		s.log.WarnContext(ctx, "sign-up by mail: look the address up", slog.Any("error", err))
		return
	}
	_, err := s.store.BeginLoginAttempt(ctx, time.Hour, store.LoginLimit{Key: "signup:" + loginEmailKey(n.Email), Max: maxSignupLinksHour})
	if errors.Is(err, store.ErrTooManyAttempts) {
		s.log.InfoContext(ctx, "sign-up by mail: too many links for the address this hour; none sent")
		return
	}
	if err == nil {
		err = s.store.InTx(ctx, func(tx *store.Store) error {
			token, err := tx.CreateSignup(ctx, n)
			if err != nil {
				return err
			}
			return s.mailer.QueueSignupConfirm(ctx, tx, n.Email, s.baseURL+"/signup/confirm/"+token)
		})
	}
	if err != nil {
		s.log.WarnContext(ctx, "sign-up by mail: mail the link", slog.Any("error", err))
	}
}

// handleSignupSent is where every sign-up by mail lands, new address or not.
func (s *Server) handleSignupSent(c echo.Context) error {
	return render(c, http.StatusOK, views.SignupSentPage(s.shell(c, "Check your inbox", "")))
}

// handleSignupConfirmShow is where a sign-up's link lands: a button, not
// the account at once, since mail scanners open links.
func (s *Server) handleSignupConfirmShow(c echo.Context) error {
	su, err := s.store.SignupByToken(c.Request().Context(), c.Param("token"))
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, signupLinkGone)
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.SignupConfirmPage(s.shell(c, "Finish signing up", ""), su.Email, c.Param("token")))
}

// handleSignupConfirm makes the account and its first org, logs in, and
// lands on the dashboard.
func (s *Server) handleSignupConfirm(c echo.Context) error {
	u, org, err := s.store.ConfirmSignup(c.Request().Context(), c.Param("token"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, signupLinkGone)
	case errors.Is(err, store.ErrConflict):
		s.flash(c, "That address has an account already: log in.")
		return c.Redirect(http.StatusSeeOther, "/login")
	case err != nil:
		return err
	}
	if err := s.startSession(c, u.ID, org.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

const signupLinkGone = "This link no longer works: it was used, or is older than a day. Sign up again."

// noteSignupForExistingAccount tells the owner of an address that someone
// tried to sign up with it ("if it was you, log in"), at most once an hour
// an address: anyone can try sign-up as often as they like, and each try
// would otherwise mail the owner. It is logged, by user id, either way.
func (s *Server) noteSignupForExistingAccount(ctx context.Context, email string) {
	u, err := s.store.UserByEmail(ctx, email)
	if err != nil {
		s.log.WarnContext(ctx, "sign-up for an existing account: look up its owner", slog.Any("error", err))
		return
	}
	s.log.InfoContext(ctx, "sign-up for an existing account", slog.Int64("user_id", u.ID))
	_, err = s.store.BeginLoginAttempt(ctx, time.Hour, store.LoginLimit{Key: "notice:" + loginEmailKey(u.Email), Max: maxSignupNoticesHour})
	if errors.Is(err, store.ErrTooManyAttempts) {
		return
	}
	if err == nil {
		err = s.mailer.QueueSignupNotice(ctx, s.store, u.Email)
	}
	if err != nil {
		s.log.WarnContext(ctx, "sign-up for an existing account: mail its owner", slog.Any("error", err))
	}
}

func (s *Server) handleLoginShow(c echo.Context) error {
	f := views.LoginForm{Next: safeNext(c.QueryParam("next"))}
	return render(c, http.StatusOK, views.LoginPage(s.shell(c, "Log in", ""), f))
}

// handleLogin checks the password, rate-limiting failures per email and per
// client address, and starts a new session (a fresh id: never the one the
// browser came with).
func (s *Server) handleLogin(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.LoginForm{Email: strings.TrimSpace(c.FormValue("email")), Next: safeNext(c.FormValue("next"))}
	pw := c.FormValue("password")
	attempt, err := s.store.BeginLoginAttempt(ctx, loginWindow, loginLimits(c, f.Email)...)
	if errors.Is(err, store.ErrTooManyAttempts) {
		f.Error = "Too many failed log-ins. Wait 15 minutes and try again."
		return render(c, http.StatusTooManyRequests, views.LoginPage(s.shell(c, "Log in", ""), f))
	}
	if err != nil {
		return err
	}
	user, err := s.store.UserByEmail(ctx, f.Email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err != nil {
		password.Check(password.DummyHash, pw)
	}
	if err != nil || !password.Check(user.PasswordHash, pw) {
		// The attempt was counted as a failure when it began.
		f.Error = "Wrong email or password."
		return render(c, http.StatusUnauthorized, views.LoginPage(s.shell(c, "Log in", ""), f))
	}
	if err := s.store.LoginSucceeded(ctx, attempt, loginEmailKey(f.Email)); err != nil {
		return err
	}
	var orgID int64
	if orgs, err := s.store.OrgsForUser(ctx, user.ID); err != nil {
		return err
	} else if len(orgs) > 0 {
		orgID = orgs[0].ID
	}
	if err := s.startSession(c, user.ID, orgID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, f.Next)
}

func (s *Server) handleLogout(c echo.Context) error {
	if sess := currentSession(c); sess != nil {
		if err := s.store.DeleteSession(c.Request().Context(), sess.ID); err != nil {
			return err
		}
	}
	s.clearSessionCookie(c)
	return c.Redirect(http.StatusSeeOther, "/login")
}

// startSession replaces any session the browser has with a new one, so a
// session id planted before log-in is worthless after it.
func (s *Server) startSession(c echo.Context, userID, orgID int64) error {
	ctx := c.Request().Context()
	if old := currentSession(c); old != nil {
		if err := s.store.DeleteSession(ctx, old.ID); err != nil {
			return err
		}
	}
	_, cookie, err := s.store.CreateSession(ctx, userID, orgID, c.Request().UserAgent())
	if err != nil {
		return err
	}
	s.setSessionCookie(c, cookie)
	return nil
}

// loginLimits are the limits a password check for email from this client
// counts against.
func loginLimits(c echo.Context, email string) []store.LoginLimit {
	return []store.LoginLimit{
		{Key: loginEmailKey(email), Max: maxFailuresPerEmail},
		{Key: clientKey(c.RealIP()), Max: maxFailuresPerIP},
	}
}

// loginEmailKey is what the per-email log-in limit counts against: the
// email as users.email is compared, ignoring case.
func loginEmailKey(email string) string { return "email:" + strings.ToLower(email) }

// clientKey is what the per-address log-in limit counts against: an IPv4
// address, or the /64 an IPv6 address is in, since one subscriber is
// usually given a whole /64 and could otherwise try from a new address
// every time.
func clientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "ip:" + ip
	}
	if a = a.Unmap(); a.Is4() {
		return "ip:" + a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return "ip:" + p.String()
}

// safeNext returns next if it is a path on this site, and "/" otherwise. It
// is the one gate for every redirect to a place the request names.
//
// Browsers read URLs more loosely than url.Parse: they drop tabs and
// newlines anywhere in a URL and take a backslash for a slash, so "/<TAB>/x"
// and "/\x" both mean "//x", another host. Rather than clean such input,
// anything with a control character or backslash, raw or percent-encoded,
// is refused, as is any scheme, host, or path starting "//".
func safeNext(next string) string {
	const fallback = "/"
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || len(next) > 2048 {
		return fallback
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return fallback
	}
	for _, s := range []string{next, u.Path} {
		if strings.HasPrefix(s, "//") || strings.ContainsFunc(s, func(r rune) bool {
			return unicode.IsControl(r) || r == '\\'
		}) {
			return fallback
		}
	}
	return next
}
