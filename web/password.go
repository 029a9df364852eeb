package web

import (
	"golang.org/x/crypto/bcrypt"
)

// minPasswordLen is the shortest password accepted at sign-up.
const minPasswordLen = 10

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
