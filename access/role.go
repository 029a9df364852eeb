// Package access holds who may do what in an org: the roles a member can
// have and what each allows. It is the rule, apart from its storage: the
// store keeps a member's role as text and hands back an access.Role; the
// web app and the commands ask the role what it allows.
package access

// Role is what a member may do in an org.
type Role string

// The roles, from most to least powerful.
const (
	Owner  Role = "owner"
	Admin  Role = "admin"
	Member Role = "member"
	Viewer Role = "viewer"
)

// Roles lists the roles from most to least powerful.
var Roles = []Role{Owner, Admin, Member, Viewer}

func (r Role) rank() int {
	switch r {
	case Owner:
		return 4
	case Admin:
		return 3
	case Member:
		return 2
	case Viewer:
		return 1
	}
	return 0
}

// AtLeast reports whether r is as powerful as min.
func (r Role) AtLeast(min Role) bool { return r.rank() >= min.rank() }

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// CanWrite reports whether r may change anything (every role but viewer).
func (r Role) CanWrite() bool { return r.AtLeast(Member) }

// CanAdmin reports whether r may manage members, tokens and settings.
func (r Role) CanAdmin() bool { return r.AtLeast(Admin) }
