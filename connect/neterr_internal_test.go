package connect

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUnreachableWording reaches a name that resolves nowhere (.invalid is
// reserved for that) and a loopback port nobody listens on, through the
// paths that store a connection's last error, and checks the words shown.
func TestUnreachableWording(t *testing.T) {
	ctx := context.Background()
	var seen []error
	c := &caller{provider: "OpenAI", client: &http.Client{Timeout: CallTimeout}, retry: Retry{Attempts: 1}}

	var v any
	err := c.get(ctx, "https://burnrate-nosuch-account.invalid/v1/costs?x=1", &v)
	want := "OpenAI: could not reach burnrate-nosuch-account.invalid: the name does not resolve"
	seen = append(seen, err)
	if err == nil || err.Error() != want {
		t.Errorf("unresolvable host via caller: %v, want %q", err, want)
	}
	if Transient(err) != true {
		t.Errorf("an unresolvable host is worth trying again later: Transient = false")
	}

	_, rawErr := http.Get("https://burnrate-nosuch-account.invalid/exports?restype=container")
	err = azureError(rawErr, "list", "container exports")
	want = "Azure Storage: could not reach burnrate-nosuch-account.invalid: the name does not resolve (check the storage account name)"
	seen = append(seen, err)
	if err == nil || err.Error() != want {
		t.Errorf("unresolvable host via azureError: %v, want %q", err, want)
	}

	l, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	addr := l.Addr().String()
	l.Close()
	err = c.get(ctx, "http://"+addr+"/v1/costs", &v)
	want = "OpenAI: connection refused by 127.0.0.1"
	seen = append(seen, err)
	if err == nil || err.Error() != want {
		t.Errorf("refused port via caller: %v, want %q", err, want)
	}
	_, rawErr = http.Get("http://" + addr + "/bucket?list-type=2")
	err = s3Error(rawErr, "ListObjectsV2", "s3://bucket/p")
	want = "S3: connection refused by 127.0.0.1"
	seen = append(seen, err)
	if err == nil || err.Error() != want {
		t.Errorf("refused port via s3Error: %v, want %q", err, want)
	}

	for _, err := range seen {
		for _, leak := range []string{"lookup", ":53", "dial tcp", "Get \""} {
			if err != nil && strings.Contains(err.Error(), leak) {
				t.Errorf("%q leaks Go's wording %q", err, leak)
			}
		}
	}
}

// TestUnreachableTimeout: a deadline reads as the host not answering.
func TestUnreachableTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Accepts and never answers.
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	hc := &http.Client{Timeout: 200 * time.Millisecond}
	_, raw := hc.Get("http://" + l.Addr().String() + "/x")
	msg, ok := unreachable(raw, "")
	if !ok || msg != "127.0.0.1 did not answer within 60 s" {
		t.Errorf("timeout: %q %v", msg, ok)
	}
	if _, ok := unreachable(context.Canceled, ""); ok {
		t.Errorf("a cancelled context is not a network failure")
	}
}

// TestScrub: what a connection shows never carries a URL's query (an Azure
// SAS token lives there), its user, nor the resolver this server asked.
func TestScrub(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`GET https://acct.blob.core.windows.net/costs?comp=list&restype=container&sv=2022-11-02&sp=rl&sig=SECRETSIG, RESPONSE 500`:                `GET https://acct.blob.core.windows.net/costs?…, RESPONSE 500`,
		`Get "https://acct.blob.core.windows.net/costs?sig=SECRETSIG": dial tcp: lookup acct.blob.core.windows.net on 10.0.0.53:53: no such host`: `Get "https://acct.blob.core.windows.net/costs?…": dial tcp: lookup acct.blob.core.windows.net: no such host`,
		`dial tcp: lookup minio.internal on [fd00::53]:53: server misbehaving`:                                                                    `dial tcp: lookup minio.internal: server misbehaving`,
		`Get "http://user:pass@minio:9000/billing?list-type=2": EOF`:                                                                              `Get "http://minio:9000/billing?…": EOF`,
		`the token sv=2022&sig=abc%2Bdef&se=2026 was refused`:                                                                                     `the token sv=2022&sig=…&se=2026 was refused`,
		`X-Amz-Signature=deadbeef and X-Amz-Credential=AKIA/2026`:                                                                                 `X-Amz-Signature=… and X-Amz-Credential=…`,
		`404 from S3: bucket billing does not exist`:                                                                                              `404 from S3: bucket billing does not exist`,
		`could not reach https://acct.blob.core.windows.net/costs.`:                                                                               `could not reach https://acct.blob.core.windows.net/costs.`,
	} {
		if got := scrub(in); got != want {
			t.Errorf("scrub(%q)\n  = %q\nwant %q", in, got, want)
		}
	}
	err := shown(&ProviderError{Provider: "Azure Storage", Msg: "GET https://a.blob.core.windows.net/c?sig=S"})
	if strings.Contains(err.Error(), "sig=S") || !Transient(err) {
		t.Errorf("shown: %v (transient %v)", err, Transient(err))
	}
}
