// Package seal encrypts the secrets Burnrate stores (connections'
// credentials, Slack and webhook URLs) under the install's SECRET_KEY, each
// bound to its org and to what it is. It is the one place secrets are
// sealed and opened; it knows nothing of the store.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoKey is a connection saved, or read, on a server without SECRET_KEY.
var ErrNoKey = errors.New("SECRET_KEY is not set: connections keep their credentials encrypted with it; " +
	"set SECRET_KEY (or SECRET_KEY_FILE) to 32 random bytes, base64 or hex (openssl rand -base64 32), and restart")

// ErrWrongKey is a secret sealed under another key than the server's.
var ErrWrongKey = errors.New("wrong SECRET_KEY")

// Key seals and opens connection credentials with AES-256-GCM. The sealed
// form is "v1.<key id>.<base64 of nonce and ciphertext>"; the key id (the
// first 8 hex digits of a hash of the key) says which key sealed a secret,
// so a server started with another key says so instead of "cannot decrypt".
// Each secret is bound to its org (GCM's additional data): a sealed value
// copied to another org's row does not open.
type Key struct {
	aead cipher.AEAD
	id   string
}

// ParseKey reads a key as configured: 32 bytes written as base64 (standard
// or URL alphabet, padded or not) or as 64 hex digits. what names the
// setting in errors. The key itself is never part of an error.
func ParseKey(what, s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoKey
	}
	var raw []byte
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			raw = b
		}
	}
	if raw == nil {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil {
				raw = b
				break
			}
		}
	}
	if len(raw) != 32 {
		return nil, fmt.Errorf("%s: want 32 random bytes written as base64 (44 characters) or hex (64 digits), "+
			"as `openssl rand -base64 32` prints; got %d characters that are neither", what, len(s))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sum := sha256.Sum256(append([]byte("burnrate secret key id\x00"), raw...))
	return &Key{aead: aead, id: hex.EncodeToString(sum[:4])}, nil
}

// ID names the key without revealing it.
func (k *Key) ID() string { return k.id }

// additional binds a sealed value to its org and to what it is: a
// connection's credentials and a channel's URL never open as each other.
func additional(what string, orgID int64) []byte {
	return []byte("burnrate " + what + "\x00org=" + strconv.FormatInt(orgID, 10))
}

const (
	connectionSecret = "connection secret"
	channelURL       = "channel url"
)

// Seal encrypts a connection's credentials for orgID.
func (k *Key) Seal(orgID int64, plaintext []byte) string {
	return k.seal(connectionSecret, orgID, plaintext)
}

// Open decrypts a value Seal made for orgID. A value sealed under another
// key fails with ErrWrongKey, naming both key ids.
func (k *Key) Open(orgID int64, sealed string) ([]byte, error) {
	return k.open(connectionSecret, orgID, sealed)
}

// SealChannel encrypts a Slack or webhook URL of orgID's: whoever has one
// can post to the channel (docs/notifications.md).
func (k *Key) SealChannel(orgID int64, url string) string {
	return k.seal(channelURL, orgID, []byte(url))
}

// OpenChannel decrypts a URL SealChannel sealed for orgID.
func (k *Key) OpenChannel(orgID int64, sealed string) (string, error) {
	b, err := k.open(channelURL, orgID, sealed)
	return string(b), err
}

// IsSealed reports whether a stored value is sealed (by any key), rather
// than a clear value stored before sealing began.
func IsSealed(v string) bool { return strings.HasPrefix(v, "v1.") }

func (k *Key) seal(what string, orgID int64, plaintext []byte) string {
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce) // never fails (crypto/rand panics on failure since Go 1.24)
	out := k.aead.Seal(nonce, nonce, plaintext, additional(what, orgID))
	return "v1." + k.id + "." + base64.RawStdEncoding.EncodeToString(out)
}

func (k *Key) open(what string, orgID int64, sealed string) ([]byte, error) {
	parts := strings.SplitN(sealed, ".", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errors.New("the stored credentials are not in a form this version of Burnrate reads")
	}
	if parts[1] != k.id {
		return nil, fmt.Errorf("%w: the credentials were saved under key %s, and this server's SECRET_KEY is key %s; "+
			"start it with the key they were saved under, or re-encrypt them with `burnrate secrets rotate`", ErrWrongKey, parts[1], k.id)
	}
	b, err := base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil || len(b) < k.aead.NonceSize() {
		return nil, errors.New("the stored credentials are damaged: save the connection's key again")
	}
	out, err := k.aead.Open(nil, b[:k.aead.NonceSize()], b[k.aead.NonceSize():], additional(what, orgID))
	if err != nil {
		return nil, errors.New("the stored credentials do not decrypt under SECRET_KEY (damaged, or copied from another org): save the connection's key again")
	}
	return out, nil
}
