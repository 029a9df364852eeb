// Package weblogin logs a cookie-keeping HTTP client in to a running
// Burnrate through its log-in form, as a browser does, for the commands
// that drive a server from outside (benchdash, citusck).
package weblogin

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
)

var csrfToken = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

// Client logs in to the Burnrate at base as email and returns a client that
// keeps the session's cookies and does not follow redirects.
func Client(base, email, password string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/login")
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfToken.FindSubmatch(body)
	if m == nil {
		return nil, errors.New("no CSRF token on /login")
	}
	res, err = c.PostForm(base+"/login", url.Values{"_csrf": {string(m[1])}, "email": {email}, "password": {password}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("log in: status %d", res.StatusCode)
	}
	return c, nil
}
