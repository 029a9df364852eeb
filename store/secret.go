package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// newSecret returns 32 random bytes, URL-safe base64 encoded, and its hash.
// Only the hash is ever stored: a leaked database does not leak sessions,
// invite links or API tokens.
func newSecret() (secret string, hash []byte) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics on failure since Go 1.24)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret)
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
