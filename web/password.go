package web

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// minPasswordLen is the shortest password accepted, in characters.
const minPasswordLen = 10

// passwordProblem says what is wrong with a new password, or "" when
// nothing is. Length is counted in characters, not bytes (nine accented
// letters are nine, not eighteen), and without the spaces at either end, so
// that ten spaces are not a password. bcrypt reads only 72 bytes; a longer
// password is refused rather than silently cut.
func passwordProblem(pw string) string {
	if utf8.RuneCountInString(strings.TrimSpace(pw)) < minPasswordLen {
		return fmt.Sprintf("Use at least %d characters (spaces at either end do not count).", minPasswordLen)
	}
	if len(pw) > 72 {
		return "Use at most 72 bytes: 72 plain letters or digits, fewer accented or non-Latin characters."
	}
	return ""
}

// HashPassword hashes a password with bcrypt at its default cost. Passwords
// longer than bcrypt's 72 bytes are refused rather than silently truncated.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(h), err
}

func checkPassword(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// dummyHash is compared against when the email is unknown, so that a wrong
// email takes as long as a wrong password and does not reveal who has an
// account.
var dummyHash, _ = HashPassword("not a real password, only for timing")
