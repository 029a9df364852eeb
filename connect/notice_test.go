package connect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/seal"
)

// TestFixSaysWhatToDo: every failure a sync records comes with what a
// person should do about it, in their words; one that passes by itself
// says so.
func TestFixSaysWhatToDo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"Revoked", &connect.ProviderError{Provider: "OpenAI", Status: 401, Msg: "the key was refused"}, "paste a new one"},
		{"NotAdmin", &connect.ProviderError{Provider: "Anthropic", Status: 403, Msg: "the key may not read"}, "admin key"},
		{"BucketDenied", &connect.ProviderError{Provider: "S3", Status: 403, Msg: "the credentials lack s3:GetObject"}, "grant them"},
		{"Busy", &connect.ProviderError{Provider: "OpenAI", Status: 503, Msg: "OpenAI is failing"}, freshness.FixWait},
		{"Mistyped", &connect.ProviderError{Provider: "S3", Msg: "could not reach x: the name does not resolve"}, "Check the name"},
		{"NoKey", seal.ErrNoKey, "SECRET_KEY"},
		{"Other", errors.New("something"), "Press Test"},
	} {
		if got := connect.Fix(tt.err); !strings.Contains(got, tt.want) {
			t.Errorf("%s: Fix = %q, want %q in it", tt.name, got, tt.want)
		}
	}
}
