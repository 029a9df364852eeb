package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignupPasswordRules: a password is at least ten characters, counted
// as characters rather than bytes and not counting spaces at either end.
func TestSignupPasswordRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, tc := range []struct {
		password string
		ok       bool
	}{
		{strings.Repeat(" ", 10), false},
		{strings.Repeat(" ", 40), false},
		{"\t\n  \u00a0\u3000    ", false},
		{"   short   ", false},
		{strings.Repeat("é", 9), false}, // 18 bytes, 9 characters
		{strings.Repeat("😀", 9), false}, // 36 bytes
		{strings.Repeat("a", 73), false},
		{strings.Repeat("é", 10), true},
		{"  ten chars!  ", true},
		{"correct horse", true},
	} {
		c := b.client(t)
		c.get("/signup")
		email := "pw" + itoa(int64(i)) + "@example.com"
		rec := c.post("/signup", url.Values{"name": {"Pat"}, "email": {email}, "password": {tc.password}, "org_name": {"Pat's"}})
		_, err := b.st.UserByEmail(ctx(), email)
		if created := err == nil; created != tc.ok {
			t.Errorf("password %q: status %d, account created %v, want %v", tc.password, rec.Code, created, tc.ok)
			continue
		}
		if !tc.ok {
			wantStatus(t, rec, http.StatusUnprocessableEntity)
			if doc(t, rec).Find(`[data-testid=field-error]`).Length() != 1 {
				t.Errorf("password %q: no message next to the field", tc.password)
			}
		}
	}
}
