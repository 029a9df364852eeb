package web

import (
	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
)

// Request-scoped values live behind these typed accessors; the keys are
// unexported so nothing else can set them.
const (
	keySession = "burnrate.session"
	keyUser    = "burnrate.user"
	keyOrg     = "burnrate.org"
	keyRole    = "burnrate.role"
	keyStore   = "burnrate.store"
)

// currentSession is the request's session, or nil when logged out (and for
// API requests).
func currentSession(c echo.Context) *store.Session {
	s, _ := c.Get(keySession).(*store.Session)
	return s
}

// currentUser is the logged-in user, or nil.
func currentUser(c echo.Context) *store.User {
	u, _ := c.Get(keyUser).(*store.User)
	return u
}

// currentOrg is the org the request acts in, or nil.
func currentOrg(c echo.Context) *store.Org {
	o, _ := c.Get(keyOrg).(*store.Org)
	return o
}

// currentRole is the user's role in currentOrg ("" when there is none).
// API tokens act as members: they can import and read, not administer.
func currentRole(c echo.Context) access.Role {
	r, _ := c.Get(keyRole).(access.Role)
	return r
}

// db is the store the handler must use: fenced to the current org inside
// the app and API groups, the plain store elsewhere.
func (s *Server) db(c echo.Context) *store.Store {
	if st, ok := c.Get(keyStore).(*store.Store); ok {
		return st
	}
	return s.store
}
