package connect_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/store"
)

// recorder is a provider that refuses everything and remembers how each
// request signed in.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization")+req.Header.Get("x-api-key"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// TestHostCredentialsNeverLent: a connection without a key of its own
// never signs in as the server, whatever its kind: it is refused when
// saved, and one saved anyway (by an older version) is refused before any
// call, with the host's AWS credentials right there in the environment.
// Only when the operator allows it does an S3 connection use them. Not
// parallel: it sets the host's AWS_* variables.
func TestHostCredentialsNeverLent(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAHOSTHOSTHOST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "the-hosts-secret")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	b := newBundle(t)
	rec := newRecorder(t)
	b.svc.OpenAIURL, b.svc.AnthropicURL = rec.srv.URL, rec.srv.URL

	settings := map[string]string{
		connect.KindS3:    `{"bucket":"billing","prefix":"cur/acme","endpoint_url":"` + rec.srv.URL + `"}`,
		connect.KindAzure: `{"account":"acme","container":"costs","endpoint_url":"` + rec.srv.URL + `"}`,
	}
	ids := map[string]int64{}
	for _, kind := range connect.Kinds() {
		// Refused when saved: the form, the API and the CLI.
		err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
			_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, connect.Input{
				Name: kind, Kind: kind, Bucket: "billing", Account: "acme", Container: "costs", EndpointURL: rec.srv.URL})
			return err
		})
		var ie *connect.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s without a key: %v, want an input error", kind, err)
		}
		// Saved anyway, as an older version did.
		set := settings[kind]
		if set == "" {
			set = `{"start_date":"2026-11-01","data":"costs"}`
		}
		c, err := b.st.CreateConnection(context.Background(), store.NewConnection{OrgID: b.org.ID, Name: kind + " old", Kind: kind,
			Settings: []byte(set), Secret: b.svc.Key.Seal(b.org.ID, []byte(`{}`)), SecretHint: "default credential chain"})
		if err != nil {
			t.Fatal(err)
		}
		ids[kind] = c.ID
		if _, err := b.svc.Sync(context.Background(), b.org.ID, c.ID); err == nil || !strings.Contains(err.Error(), "does not lend its own identity") {
			t.Errorf("%s sync without a key: %v", kind, err)
		}
		if err := b.svc.Test(context.Background(), b.connection(t, c.ID)); err == nil || !strings.Contains(err.Error(), "does not lend its own identity") {
			t.Errorf("%s test without a key: %v", kind, err)
		}
	}
	if got := rec.requests(); len(got) != 0 {
		t.Fatalf("the provider was called %d times: %q", len(got), got)
	}

	// The operator of a single-tenant install allows it: the S3
	// connection signs in with the host's key.
	b.svc.AllowHostCredentials = true
	if err := b.svc.Test(context.Background(), b.connection(t, ids[connect.KindS3])); err == nil {
		t.Fatal("the recorder refuses everything")
	}
	got := rec.requests()
	if len(got) == 0 || !strings.Contains(got[0], "Credential=AKIAHOSTHOSTHOST/") {
		t.Fatalf("with host credentials allowed, S3 signed in as %q", got)
	}
}
