package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
)

// Password is the password of every user the factories make.
const Password = "correct horse battery staple"

var (
	seq          atomic.Int64
	passwordHash = func() string {
		// MinCost: the factories make many users; strength is not under test.
		h, err := bcrypt.GenerateFromPassword([]byte(Password), bcrypt.MinCost)
		if err != nil {
			panic(err)
		}
		return string(h)
	}()
)

// UserOpts sets fields of a factory user; zero fields get unique defaults.
type UserOpts struct {
	Email string
	Name  string
}

// User creates a user whose password is Password.
func User(t testing.TB, st *store.Store, opts UserOpts) store.User {
	t.Helper()
	n := seq.Add(1)
	if opts.Email == "" {
		opts.Email = fmt.Sprintf("user%d@example.com", n)
	}
	if opts.Name == "" {
		opts.Name = fmt.Sprintf("User %d", n)
	}
	u, err := st.CreateUser(context.Background(), opts.Email, opts.Name, passwordHash)
	if err != nil {
		t.Fatalf("storetest.User: %v", err)
	}
	return u
}

// OrgOpts sets fields of a factory org; zero fields get defaults.
type OrgOpts struct {
	Name  string
	Owner *store.User // a new user when nil
}

// Org creates an org with an owner and returns both.
func Org(t testing.TB, st *store.Store, opts OrgOpts) (store.Org, store.User) {
	t.Helper()
	if opts.Name == "" {
		opts.Name = fmt.Sprintf("Org %d", seq.Add(1))
	}
	owner := opts.Owner
	if owner == nil {
		u := User(t, st, UserOpts{})
		owner = &u
	}
	o, err := st.CreateOrg(context.Background(), opts.Name, owner.ID)
	if err != nil {
		t.Fatalf("storetest.Org: %v", err)
	}
	return o, *owner
}

// Member creates a user with role in org.
func Member(t testing.TB, st *store.Store, org store.Org, role access.Role) store.User {
	t.Helper()
	u := User(t, st, UserOpts{})
	if err := st.AddMember(context.Background(), org.ID, u.ID, role); err != nil {
		t.Fatalf("storetest.Member: %v", err)
	}
	return u
}
