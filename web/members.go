package web

import (
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/account"
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
func (s *Server) handleInviteCreate(c echo.Context) error {
	f := views.InviteForm{Email: strings.TrimSpace(c.FormValue("email")), Role: c.FormValue("role")}
	role := access.Role(f.Role)
	if addr, err := mail.ParseAddress(f.Email); err != nil || addr.Address != f.Email {
		f.Error = "Enter the teammate's email address, like ann@example.com."
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
		_, token, err := tx.CreateInvite(ctx, org.ID, f.Email, role, user.ID)
		if err != nil {
			return err
		}
		f.Link = s.cfg.BaseURL + "/join/" + token
		if s.mailer == nil {
			return nil
		}
		return s.mailer.QueueInvite(ctx, tx, account.Invite{
			OrgID: org.ID, OrgName: org.Name, InviterName: user.Name, InviterEmail: user.Email,
			To: f.Email, Role: role, Link: f.Link,
		})
	})
	if err != nil {
		return err
	}
	f.Mailed, f.MailOff = s.mailer != nil, s.mailer != nil && !s.mailConfigured()
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

// handleInviteAccept joins the logged-in user to the invite's org.
func (s *Server) handleInviteAccept(c echo.Context) error {
	ctx := c.Request().Context()
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
