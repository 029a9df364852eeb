package notify

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/burnrate/burnrate/store"
)

// WebhookSecretPrefix starts every webhook signing secret, so that a leaked
// one is recognisable.
const WebhookSecretPrefix = "brwh_"

// RotationOverlap is how long an org's previous signing secret keeps
// signing after a rotation, so that receivers can switch to the new one
// without refusing deliveries meanwhile.
const RotationOverlap = 24 * time.Hour

// NewWebhookSecret returns a new signing secret: 32 random bytes.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics on failure since Go 1.24)
	return WebhookSecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// webhookBody is nt as the JSON a webhook receives. id is the
// notification's Key: the same on every retry, so that a receiver can
// recognise a delivery it already has.
func webhookBody(nt Notification, now time.Time) ([]byte, error) {
	data := nt.Payload
	if data == nil {
		data = map[string]any{}
	}
	return json.Marshal(map[string]any{
		"id":         nt.Key,
		"type":       string(nt.Kind),
		"org_id":     nt.OrgID,
		"budget_id":  nt.BudgetID,
		"created_at": now.UTC().Format(time.RFC3339),
		"subject":    nt.Subject,
		"text":       nt.Text,
		"link":       nt.Link,
		"data":       data,
	})
}

// Sign is the hex HMAC-SHA256, keyed with secret, of the timestamp (unix
// seconds), a dot, and the body: what Burnrate-Signature carries after
// "v1=".
func Sign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte("."))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// signatureHeader is the Burnrate-Signature value: v1=<signature>, and
// after a rotation, while the previous secret still signs, a second
// v1=<signature> with it.
func signatureHeader(sec store.WebhookSecret, timestamp int64, body []byte) string {
	h := "v1=" + Sign(sec.Secret, timestamp, body)
	if sec.Previous != "" {
		h += ", v1=" + Sign(sec.Previous, timestamp, body)
	}
	return h
}
