package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/account"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

func (s *Server) membersPage(c echo.Context, status int, f views.InviteForm) error {
	ctx := c.Request().Context()
	org := currentOrg(c)
	members, err := s.db(c).Members(ctx, org.ID)
	if err != nil {
		return err
	}
	invites, err := s.db(c).Invites(ctx, org.ID)
	if err != nil {
		return err
	}
	return render(c, status, views.MembersPage(s.shell(c, "Members", "settings"), members, invites, f))
}

func (s *Server) handleMembers(c echo.Context) error {
	return s.membersPage(c, http.StatusOK, views.InviteForm{})
}

// pathID parses a numeric path parameter; anything else is "not found".
func pathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, store.ErrNotFound
	}
	return id, nil
}

// handleMemberRole changes a member's role. Only owners make owners, and
// the last owner stays one.
func (s *Server) handleMemberRole(c echo.Context) error {
	userID, err := pathID(c, "user_id")
	if err != nil {
		return err
	}
	role := access.Role(c.FormValue("role"))
	if !role.Valid() {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "Unknown role "+strconv.Quote(string(role))+": use owner, admin, member or viewer.")
	}
	actor := currentRole(c)
	m, err := s.db(c).SetMemberRole(c.Request().Context(), currentOrg(c).ID, userID, role, func(m store.Member) error {
		if (role == access.Owner || m.Role == access.Owner) && actor != access.Owner {
			return echo.NewHTTPError(http.StatusForbidden, "Only owners can make or unmake owners.")
		}
		return nil
	})
	if errors.Is(err, store.ErrLastOwner) {
		return errLastOwner
	}
	if err != nil {
		return err
	}
	s.flash(c, m.Email+" is now "+string(role)+".")
	return c.Redirect(http.StatusSeeOther, "/members")
}

func (s *Server) handleMemberRemove(c echo.Context) error {
	userID, err := pathID(c, "user_id")
	if err != nil {
		return err
	}
	actor := currentRole(c)
	m, revoked, err := s.db(c).RemoveMember(c.Request().Context(), currentOrg(c).ID, userID, func(m store.Member) error {
		if m.Role == access.Owner && actor != access.Owner {
			return echo.NewHTTPError(http.StatusForbidden, "Only owners can remove owners.")
		}
		return nil
	})
	if errors.Is(err, store.ErrLastOwner) {
		return errLastOwner
	}
	if err != nil {
		return err
	}
	s.flash(c, removedText(m.Email, revoked))
	return c.Redirect(http.StatusSeeOther, "/members")
}

// removedText confirms a removal and says how many API tokens went with it.
func removedText(email string, revokedTokens int64) string {
	switch revokedTokens {
	case 0:
		return "Removed " + email + "."
	case 1:
		return "Removed " + email + " and revoked 1 API token they created."
	}
	return "Removed " + email + " and revoked " + strconv.FormatInt(revokedTokens, 10) + " API tokens they created."
}

// handleInviteCreate makes an invite link and shows it once.
// Invites mail whatever address an admin types, from our domain: without a
// limit, an org could withdraw and resend one to use us as a spam relay.
// Each invite sent counts, withdrawn or not, for a day.
const (
	MaxInvitesPerOrgDay     = 30
	MaxInvitesPerAddressDay = 3
)

func (s *Server) handleInviteCreate(c echo.Context) error {
	f := views.InviteForm{Email: strings.TrimSpace(c.FormValue("email")), Role: c.FormValue("role")}
	role := access.Role(f.Role)
	if addr, err := mail.ParseAddress(f.Email); err != nil || addr.Address != f.Email {
		f.Error = "Enter the teammate's email address, like ann@example.com."
	} else if label.MixedScriptDomain(f.Email) {
		f.Error = lookalikeDomain
	} else if role != access.Admin && role != access.Member && role != access.Viewer {
		f.Error = "Invite as admin, member or viewer."
	}
	if f.Error != "" {
		return s.membersPage(c, http.StatusUnprocessableEntity, f)
	}
	ctx := c.Request().Context()
	org, user := currentOrg(c), currentUser(c)
	// The invite and its email commit together: no mail for an invite
	// that failed, no invite whose mail was lost.
	err := s.db(c).InTx(ctx, func(tx *store.Store) error {
		if s.billing.Enabled() {
			// The org's row is locked so that invites sent at once
			// are counted one after the other.
			if _, err := tx.LockOrgBilling(ctx, org.ID); err != nil {
				return err
			}
			if err := s.billing.CheckInvite(ctx, tx, *org); err != nil {
				return err
			}
		}
		// Counted in the invite's transaction, and never taken back:
		// an invite withdrawn and sent again is mailed again.
		if _, err := tx.BeginLoginAttempt(ctx, 24*time.Hour,
			store.LoginLimit{Key: "invite-org:" + strconv.FormatInt(org.ID, 10), Max: MaxInvitesPerOrgDay},
			store.LoginLimit{Key: "invite-to:" + strings.ToLower(f.Email), Max: MaxInvitesPerAddressDay}); err != nil {
			return err
		}
		_, token, err := tx.CreateInvite(ctx, org.ID, f.Email, role, user.ID)
		if err != nil {
			return err
		}
		f.Link = s.baseURL + "/join/" + token
		return s.mailer.QueueInvite(ctx, tx, account.Invite{
			OrgID: org.ID, OrgName: org.Name, InviterName: user.Name, InviterEmail: user.Email,
			To: f.Email, Role: role, Link: f.Link,
		})
	})
	var le *billing.LimitError
	if errors.As(err, &le) {
		f.Error, f.UpgradeURL, f.Link = le.Msg, billing.UpgradePath, ""
		return s.membersPage(c, le.HTTPStatus(), f)
	}
	if errors.Is(err, store.ErrTooManyAttempts) {
		f.Error, f.Link = fmt.Sprintf("Too many invites today: an org sends at most %d a day, and an address gets at most %d a day "+
			"from all orgs, withdrawn ones included. Try again tomorrow, or send the person the link of an invite that is still open.",
			MaxInvitesPerOrgDay, MaxInvitesPerAddressDay), ""
		c.Response().Header().Set("Retry-After", "86400")
		return s.membersPage(c, http.StatusTooManyRequests, f)
	}
	if err != nil {
		return err
	}
	f.Mailed, f.MailOff = true, !s.mailConfigured()
	return s.membersPage(c, http.StatusCreated, f)
}

func (s *Server) handleInviteDelete(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteInvite(c.Request().Context(), currentOrg(c).ID, id); err != nil {
		return err
	}
	s.flash(c, "Invite withdrawn.")
	return c.Redirect(http.StatusSeeOther, "/members")
}

// inviteForOther says what to do with an invite sent to invited when
// logged in as, or signing up with, another address.
func inviteForOther(invited, as string) string {
	return fmt.Sprintf("This invite was sent to %s, and you are %s. Log out, then log in or sign up as %s to join; "+
		"or ask whoever invited you to invite %s instead.", invited, as, invited, as)
}

// handleInviteShow is where an invite link lands, logged in or not.
func (s *Server) handleInviteShow(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	inv, err := s.store.InviteByToken(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "This invite link is no longer valid: it was used, withdrawn, or is older than 7 days. Ask for a new one.")
	}
	if err != nil {
		return err
	}
	org, err := s.store.Org(ctx, inv.OrgID)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.InvitePage(s.shell(c, "Join "+org.Name, ""), inv, org.Name, token))
}

// handleInviteAccept joins the logged-in user to the invite's org, when
// the invite was sent to their address: a link forwarded, or opened in a
// browser logged in as someone else, joins nobody else.
func (s *Server) handleInviteAccept(c echo.Context) error {
	ctx := c.Request().Context()
	open, err := s.store.InviteByToken(ctx, c.Param("token"))
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "This invite link is no longer valid: it was used, withdrawn, or is older than 7 days. Ask for a new one.")
	}
	if err != nil {
		return err
	}
	if u := currentUser(c); !strings.EqualFold(open.Email, u.Email) {
		return echo.NewHTTPError(http.StatusForbidden, inviteForOther(open.Email, u.Email))
	}
	inv, err := s.store.AcceptInvite(ctx, c.Param("token"), currentUser(c).ID)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "This invite link is no longer valid: it was used, withdrawn, or is older than 7 days. Ask for a new one.")
	}
	if err != nil {
		return err
	}
	if err := s.store.SetSessionOrg(ctx, currentSession(c).ID, inv.OrgID); err != nil {
		return err
	}
	s.flash(c, "Welcome aboard.")
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}
