package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// commandOrg is a test database's URL, for the commands, and an org in it.
func commandOrg(t *testing.T) (string, store.Org) {
	t.Helper()
	url := storetest.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	return url, org
}

func randomKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// burnrate connection add, list and sync against a loopback OpenAI, then
// burnrate secrets rotate: the connection still syncs under the new key,
// and a server left on the old key says so.
func TestConnectionCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, org := commandOrg(t)
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-admin-cli-test-key-abcd" || r.URL.Path != "/v1/organization/costs" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		io.WriteString(w, `{"object":"page","data":[{"object":"bucket","start_time":`+q.Get("start_time")+`,"end_time":`+q.Get("end_time")+
			`,"results":[{"object":"organization.costs.result","amount":{"value":12.345678,"currency":"usd"},"line_item":"gpt-4o, input","project_id":"proj_1"}]}],"has_more":false,"next_page":null}`)
	}))
	defer openai.Close()
	oldKey, newKey := randomKey(), randomKey()
	vars := map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error", "SECRET_KEY": oldKey, "OPENAI_API_URL": openai.URL}
	cmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, env(vars), &out, &bytes.Buffer{})
		return out.String(), err
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("sk-admin-cli-test-key-abcd\n"), 0o600)
	out, err := cmd("connection", "add", "--org", org.Slug, "--name", "OpenAI", "--kind", "openai", "--api-key-file", keyFile, "--restate-days", "2")
	if err != nil || !strings.Contains(out, `connection "OpenAI" added (key …abcd)`) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err = cmd("connection", "list", "--org", org.Slug, "--json")
	if err != nil || strings.Contains(out, "cli-test") || !strings.Contains(out, `"restate_days":2`) {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = cmd("connection", "sync", "--org", org.Slug, "openai")
	if err != nil || !strings.Contains(out, "openai-costs, 1 rows") {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	// A revoked key is replaced from the command line too; the list says
	// what to do while it fails.
	badFile := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(badFile, []byte("sk-admin-revoked-0000\n"), 0o600)
	if out, err = cmd("connection", "key", "--org", org.Slug, "--api-key-file", badFile, "OpenAI"); err != nil ||
		!strings.Contains(out, `connection "OpenAI" has a new key (key …0000)`) {
		t.Fatalf("key: %v\n%s", err, out)
	}
	if _, err = cmd("connection", "sync", "--org", org.Slug, "OpenAI"); err == nil {
		t.Fatal("a sync with the revoked key worked")
	}
	if out, err = cmd("connection", "list", "--org", org.Slug); err != nil || !strings.Contains(out, "paste a new one") {
		t.Fatalf("list of the failing connection: %v\n%s", err, out)
	}
	if out, err = cmd("connection", "key", "--org", org.Slug, "--api-key-file", keyFile, "OpenAI"); err != nil {
		t.Fatalf("key: %v\n%s", err, out)
	}

	vars["SECRET_KEY_OLD"], vars["SECRET_KEY"] = oldKey, newKey
	out, err = cmd("secrets", "rotate")
	if err != nil || !strings.Contains(out, "re-encrypted 1 connections' credentials") {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	out, err = cmd("connection", "sync", "--org", org.Slug, "--json", "OpenAI")
	var res struct{ Imports []struct{ Rows int } }
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || len(res.Imports) != 1 {
		t.Fatalf("sync under the new key: %v\n%s", err, out)
	}
	vars["SECRET_KEY"] = oldKey
	_, err = cmd("connection", "sync", "--org", org.Slug, "OpenAI")
	if err == nil || !strings.Contains(err.Error(), "wrong SECRET_KEY") || !strings.Contains(err.Error(), "burnrate secrets rotate") {
		t.Fatalf("sync under the old key: %v", err)
	}
	vars["SECRET_KEY"] = "too-short"
	if _, err := cmd("connection", "list", "--org", org.Slug); err == nil || !strings.Contains(err.Error(), "SECRET_KEY: want 32 random bytes") {
		t.Fatalf("a malformed key: %v", err)
	}
}

// burnrate connection add --kind gcp-bigquery reads the service account's
// key from its file and keeps only its account in view; a sync goes
// to GOOGLE_TOKEN_URL and BIGQUERY_API_URL, and says when Google refuses
// the key.
func TestConnectionCommandsGCP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, org := commandOrg(t)
	google := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" {
			t.Errorf("unexpected call %s", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
	}))
	defer google.Close()
	vars := map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error", "SECRET_KEY": randomKey(),
		"GOOGLE_TOKEN_URL": google.URL + "/token", "BIGQUERY_API_URL": google.URL + "/bigquery/v2"}
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	key, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "acme-billing", "private_key_id": "feedfacecafe1234",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": "reader@acme-billing.iam.gserviceaccount.com"})
	cmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, env(vars), &out, &bytes.Buffer{})
		return out.String(), err
	}
	keyFile := filepath.Join(t.TempDir(), "key.json")
	os.WriteFile(keyFile, key, 0o600)
	out, err := cmd("connection", "add", "--org", org.Slug, "--name", "GCP", "--kind", "gcp-bigquery",
		"--table", "acme-billing.billing.gcp_billing_export_v1_01A2B3_C4D5E6_F7A8B9", "--service-account-file", keyFile)
	if err != nil || !strings.Contains(out, `connection "GCP" added (key reader@acme-billing.iam.gserviceaccount.com (key feedface…))`) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if _, err := cmd("connection", "add", "--org", org.Slug, "--name", "GCP2", "--kind", "gcp-bigquery", "--table", "a.b.c"); err == nil ||
		!strings.Contains(err.Error(), "--service-account-file is required") {
		t.Fatalf("add without a key: %v", err)
	}
	_, err = cmd("connection", "sync", "--org", org.Slug, "GCP")
	if err == nil || !strings.Contains(err.Error(), "the service account key was refused (invalid_grant)") {
		t.Fatalf("sync: %v", err)
	}
}
