package digest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"

	"github.com/burnrate/burnrate/store"
)

// UnsubscribeKeyName names the install's key (in app_secrets) that signs
// unsubscribe links.
const UnsubscribeKeyName = "digest_unsubscribe"

// UnsubscribeKey is the install's key for unsubscribe links, made on first
// use. st must not be fenced: the fenced role cannot read it.
func UnsubscribeKey(ctx context.Context, st *store.Store) ([]byte, error) {
	return st.AppSecret(ctx, UnsubscribeKeyName)
}

// UnsubscribeToken is the token of the link that stops orgID's digest
// going to userID: "ORG.USER.MAC", MAC the HMAC-SHA256 of the ids under
// key. It does not expire: an unsubscribe link in an old email must still
// work, and all it can do is stop that one person's digest of that one org.
func UnsubscribeToken(key []byte, orgID, userID int64) string {
	ids := strconv.FormatInt(orgID, 10) + "." + strconv.FormatInt(userID, 10)
	return ids + "." + base64.RawURLEncoding.EncodeToString(unsubscribeMAC(key, ids))
}

// VerifyUnsubscribe checks token against key and returns the org and user
// it names; ok is false for a token that is malformed or not signed by key.
func VerifyUnsubscribe(key []byte, token string) (orgID, userID int64, ok bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 || len(token) > 200 {
		return 0, 0, false
	}
	ids, sig := token[:i], token[i+1:]
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, unsubscribeMAC(key, ids)) {
		return 0, 0, false
	}
	o, u, found := strings.Cut(ids, ".")
	if !found {
		return 0, 0, false
	}
	orgID, err1 := strconv.ParseInt(o, 10, 64)
	userID, err2 := strconv.ParseInt(u, 10, 64)
	if err1 != nil || err2 != nil || orgID <= 0 || userID <= 0 {
		return 0, 0, false
	}
	return orgID, userID, true
}

// unsubscribeMAC signs ids with a purpose prefix, so that a MAC made with
// the same key for anything else can never pass for one of these.
func unsubscribeMAC(key []byte, ids string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("burnrate digest unsubscribe v1:" + ids))
	return m.Sum(nil)
}

// UnsubscribeURL is the one-click unsubscribe link for token under baseURL.
func UnsubscribeURL(baseURL, token string) string {
	return strings.TrimRight(baseURL, "/") + "/digest/unsubscribe?token=" + url.QueryEscape(token)
}
