// Package password holds the rules for users' passwords and how they are
// hashed (bcrypt), for the web app's sign-up, log-in and account pages and
// the commands that create users.
package password

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// MinLength is the shortest password accepted, in characters.
const MinLength = 10

// Problem says what is wrong with a new password, or "" when
// nothing is. Length is counted in characters, not bytes (nine accented
// letters are nine, not eighteen), and without the spaces at either end, so
// that ten spaces are not a password. bcrypt reads only 72 bytes; a longer
// password is refused rather than silently cut.
func Problem(pw string) string {
	if utf8.RuneCountInString(strings.TrimSpace(pw)) < MinLength {
		return fmt.Sprintf("Use at least %d characters (spaces at either end do not count).", MinLength)
	}
	if len(pw) > 72 {
		return "Use at most 72 bytes: 72 plain letters or digits, fewer accented or non-Latin characters."
	}
	return ""
}

// Hash hashes a password with bcrypt at its default cost. Passwords
// longer than bcrypt's 72 bytes are refused rather than silently truncated.
func Hash(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(h), err
}

// Check reports whether pw is the password hash was made from.
func Check(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// DummyHash is compared against when the email is unknown, so that a wrong
// email takes as long as a wrong password and does not reveal who has an
// account.
var DummyHash, _ = Hash("not a real password, only for timing")
