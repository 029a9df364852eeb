package seal_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/seal"
)

// newKey returns a random key and how it was written.
func newKey(t testing.TB) (*seal.Key, string) {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	s := base64.StdEncoding.EncodeToString(b)
	k, err := seal.ParseKey("SECRET_KEY", s)
	if err != nil {
		t.Fatal(err)
	}
	return k, s
}

func TestParseKey(t *testing.T) {
	_, b64 := newKey(t)
	raw := make([]byte, 32)
	for _, ok := range []string{b64, strings.TrimRight(b64, "="), hex.EncodeToString(raw), " " + b64 + "\n"} {
		if _, err := seal.ParseKey("SECRET_KEY", ok); err != nil {
			t.Errorf("ParseKey(%q): %v", ok, err)
		}
	}
	if _, err := seal.ParseKey("SECRET_KEY", ""); !errors.Is(err, seal.ErrNoKey) {
		t.Errorf("empty key: %v", err)
	}
	for _, bad := range []string{"hunter2", b64[:20], hex.EncodeToString(raw[:16])} {
		_, err := seal.ParseKey("SECRET_KEY", bad)
		if err == nil || !strings.Contains(err.Error(), "SECRET_KEY: want 32 random bytes") || strings.Contains(err.Error(), bad) {
			t.Errorf("ParseKey(%q): %v", bad, err)
		}
	}
}

func TestSealOpen(t *testing.T) {
	k1, _ := newKey(t)
	k2, _ := newKey(t)
	sealed := k1.Seal(7, []byte("sk-admin-secret"))
	if strings.Contains(sealed, "sk-admin") || sealed == k1.Seal(7, []byte("sk-admin-secret")) {
		t.Fatalf("sealed %q: in clear, or without a fresh nonce", sealed)
	}
	if got, err := k1.Open(7, sealed); err != nil || string(got) != "sk-admin-secret" {
		t.Fatalf("Open: %q, %v", got, err)
	}
	_, err := k2.Open(7, sealed)
	if !errors.Is(err, seal.ErrWrongKey) || !strings.Contains(err.Error(), "saved under key "+k1.ID()) ||
		!strings.Contains(err.Error(), "SECRET_KEY is key "+k2.ID()) || !strings.Contains(err.Error(), "burnrate secrets rotate") {
		t.Fatalf("wrong key: %v", err)
	}
	// Copied to another org's row, or tampered with: refused.
	if _, err := k1.Open(8, sealed); err == nil {
		t.Fatal("a secret opened for another org")
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := k1.Open(7, tampered); err == nil || !strings.Contains(err.Error(), "do not decrypt") {
		t.Fatalf("tampered: %v", err)
	}
}

// A connection's credentials and a channel's URL never open as each other,
// though sealed by one key for one org.
func TestWhatIsSealedIsPartOfTheSeal(t *testing.T) {
	k, _ := newKey(t)
	if _, err := k.OpenChannel(7, k.Seal(7, []byte("https://hooks.slack.com/x"))); err == nil {
		t.Error("credentials opened as a channel URL")
	}
	if _, err := k.Open(7, k.SealChannel(7, "https://hooks.slack.com/x")); err == nil {
		t.Error("a channel URL opened as credentials")
	}
	if !seal.IsSealed(k.SealChannel(7, "u")) || seal.IsSealed("https://hooks.slack.com/x") {
		t.Error("IsSealed")
	}
}
