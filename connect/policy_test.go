package connect_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/connect/egress"
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
	b.svc.Egress.Any = true // the recorder is on loopback

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

// TestConnectionsRefusePrivateEndpoints: an endpoint aimed at the server's
// own network (loopback, metadata, every spelling) is refused when saved,
// and one saved anyway is refused when dialled, without a byte sent: the
// Test button is no port scanner. A redirect from an allowed endpoint to
// another private address is refused too.
func TestConnectionsRefusePrivateEndpoints(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.svc.Egress = egress.Policy{}
	var hits, elsewhere atomic.Int32
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	other.Listener = ln
	other.Start()
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]

	for _, in := range []connect.Input{
		{Kind: connect.KindS3, Bucket: "billing", EndpointURL: srv.URL},
		{Kind: connect.KindS3, Bucket: "billing", EndpointURL: "http://localhost" + port},
		{Kind: connect.KindS3, Bucket: "billing", EndpointURL: "http://169.254.169.254"},
		{Kind: connect.KindS3, Bucket: "billing", EndpointURL: "http://[::127.0.0.1]" + port},
		{Kind: connect.KindS3, Bucket: "billing", EndpointURL: "http://[::ffff:10.0.0.1]:5432"},
		{Kind: connect.KindAzure, Account: "acme", Container: "costs", EndpointURL: "http://10.0.0.8:10000/acme"},
		{Kind: connect.KindAzure, SASToken: srv.URL + "/acme/costs?sv=2022-11-02&sp=rl&sig=abc"},
	} {
		in.Name = "private"
		in.AccessKeyID, in.SecretAccessKey, in.AccountKey = "AKIATESTTESTTEST", "secret", "a2V5"
		if in.SASToken != "" {
			in.AccountKey = ""
		}
		if in.Kind == connect.KindAzure && in.SASToken == "" {
			in.AccessKeyID, in.SecretAccessKey = "", ""
		}
		err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
			_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, in)
			return err
		})
		var ie *connect.InputError
		if !errors.As(err, &ie) || ie.Field != "endpoint_url" || !strings.Contains(ie.Msg, "loopback, private or link-local") {
			t.Errorf("%s %s%s: %v, want endpoint_url refused", in.Kind, in.EndpointURL, in.SASToken, err)
		}
	}

	// Saved anyway (by an older version, or a name that resolves there):
	// refused when dialled.
	saved := func(kind, settings, cred string) store.Connection {
		c, err := b.st.CreateConnection(context.Background(), store.NewConnection{OrgID: b.org.ID, Name: "saved " + settings, Kind: kind,
			Settings: []byte(settings), Secret: b.svc.Key.Seal(b.org.ID, []byte(cred)), SecretHint: "…"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s3cred := `{"access_key_id":"AKIATESTTESTTEST","secret_access_key":"secret"}`
	for _, c := range []store.Connection{
		saved(connect.KindS3, `{"bucket":"billing","endpoint_url":"http://localhost`+port+`"}`, s3cred),
		saved(connect.KindS3, `{"bucket":"billing","endpoint_url":"`+srv.URL+`"}`, s3cred),
		saved(connect.KindAzure, `{"container":"costs","endpoint_url":"http://localhost`+port+`/acme"}`, `{"sas_token":"sv=1&sig=abc"}`),
	} {
		err := b.svc.Test(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "it is a loopback, private or link-local address, which connections may not reach") ||
			strings.Contains(err.Error(), "127.0.0.1") && !strings.Contains(c.Name, "127.0.0.1") {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback server got %d requests", hits.Load())
	}

	// The operator allows 127.0.0.1 (a MinIO or Azurite there): it is
	// reached, but its redirect to 127.0.0.2 is not followed there.
	b.svc.Egress = egress.Policy{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	c := saved(connect.KindAzure, `{"container":"costs","endpoint_url":"`+srv.URL+`/acme"}`, `{"sas_token":"sv=1&sig=abc"}`)
	if err := b.svc.Test(context.Background(), c); err == nil || !strings.Contains(err.Error(), "private or link-local") {
		t.Errorf("redirected to 127.0.0.2: %v", err)
	}
	if hits.Load() == 0 || elsewhere.Load() != 0 {
		t.Fatalf("allowed endpoint hit %d times, the private one it redirects to %d times", hits.Load(), elsewhere.Load())
	}
}

// TestProviderAnswersBoundedInDepth: an answer nested deeper than
// jsonlimit.MaxDepth is refused before it is decoded, as every JSON body
// from outside is.
func TestProviderAnswersBoundedInDepth(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(strings.Repeat("[", 40_000)))
	}))
	defer srv.Close()
	b.svc.OpenAIURL = srv.URL
	c := b.create(t, connect.Input{Name: "deep", Kind: connect.KindOpenAI, APIKey: "sk-admin-test-key-1234"})
	if err := b.svc.Test(context.Background(), c); err == nil || !strings.Contains(err.Error(), "the answer is not the report's JSON: JSON nested more than 64 levels deep") {
		t.Fatalf("deep answer: %v", err)
	}
}

// TestConnectionErrorsShowNoSecrets: a blob service that hangs up, or
// answers what is not XML, makes the SDK's errors quote the URL asked, SAS
// query and all; what the sync records and the test shows names the host
// and never the token.
func TestConnectionErrorsShowNoSecrets(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	for _, answer := range []func(http.ResponseWriter){
		func(w http.ResponseWriter) { // hang up
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		func(w http.ResponseWriter) { // not XML
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write([]byte("<EnumerationResults><Blobs><Blob><Name>"))
		},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
		c := b.create(t, connect.Input{Name: "sas " + srv.URL, Kind: connect.KindAzure,
			SASToken: srv.URL + "/acme/costs?sv=2022-11-02&sp=rl&se=2030-01-01&sig=TOPSECRETSIG%3D"})
		testErr := b.svc.Test(context.Background(), c)
		_, syncErr := b.svc.Sync(context.Background(), b.org.ID, c.ID)
		last := b.connection(t, c.ID).LastError
		for _, shown := range []string{fmt.Sprint(testErr), fmt.Sprint(syncErr), last} {
			if shown == "<nil>" || strings.Contains(shown, "TOPSECRETSIG") || strings.Contains(shown, "sig=T") {
				t.Errorf("shown: %q", shown)
			}
		}
		srv.Close()
	}
	// A bucket endpoint whose name does not resolve: the SDK's error
	// quoted the URL and the resolver this server asked.
	c := b.create(t, connect.Input{Name: "nowhere", Kind: connect.KindS3, Bucket: "billing", Prefix: "cur/x",
		EndpointURL: "https://burnrate-nosuch-endpoint.invalid", AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	err := b.svc.Test(context.Background(), c)
	if err == nil || err.Error() != "S3: could not reach burnrate-nosuch-endpoint.invalid: the name does not resolve (check the bucket's name and region)" {
		t.Errorf("unresolvable endpoint: %v", err)
	}
}
