package connect_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// The key typed is in no column of the database, in clear or as typed;
// pages get the hint only.
func TestStoredSecretNotInClear(t *testing.T) {
	b := newBundle(t)
	const apiKey = "sk-admin-THIS-IS-THE-SECRET-9f3k"
	c := b.create(t, connect.Input{Name: "OpenAI", Kind: connect.KindOpenAI, APIKey: apiKey})
	if c.SecretHint != "…9f3k" {
		t.Fatalf("hint %q", c.SecretHint)
	}
	var row string
	if err := b.st.Pool().QueryRow(context.Background(), `SELECT c::text FROM connections c WHERE id = $1`, c.ID).Scan(&row); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, "THIS-IS-THE-SECRET") || strings.Contains(row, hex.EncodeToString([]byte(apiKey))) {
		t.Fatalf("the key is stored in clear: %s", row)
	}
}

func TestNoKey(t *testing.T) {
	b := newBundle(t)
	c := b.create(t, connect.Input{Name: "OpenAI", Kind: connect.KindOpenAI, APIKey: "sk-admin-0123456789"})
	b.svc.Key = nil
	err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
		_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, connect.Input{Name: "other", Kind: connect.KindOpenAI, APIKey: "sk-admin-0123456789"})
		return err
	})
	if !errors.Is(err, seal.ErrNoKey) || !strings.Contains(err.Error(), "SECRET_KEY is not set") {
		t.Fatalf("create without a key: %v", err)
	}
	if _, err := b.svc.Sync(context.Background(), b.org.ID, c.ID); !errors.Is(err, seal.ErrNoKey) {
		t.Fatalf("sync without a key: %v", err)
	}
	if got := b.connection(t, c.ID); !strings.HasPrefix(got.LastError, "SECRET_KEY is not set") {
		t.Fatalf("recorded %q", got.LastError)
	}
}

// A server started with another key says so on the connection, naming
// both keys, and imports nothing.
func TestWrongKeyOnSync(t *testing.T) {
	b := newBundle(t)
	f := newFakeOpenAI(t, b)
	c := b.create(t, connect.Input{Name: "OpenAI", Kind: connect.KindOpenAI, APIKey: f.key})
	other, _ := newKey(t)
	b.svc.Key = other
	_, err := b.svc.Sync(context.Background(), b.org.ID, c.ID)
	if !errors.Is(err, seal.ErrWrongKey) {
		t.Fatalf("sync under another key: %v", err)
	}
	got := b.connection(t, c.ID)
	if !strings.Contains(got.LastError, "wrong SECRET_KEY") || !strings.Contains(got.LastError, other.ID()) || len(f.takeRequests()) != 0 {
		t.Fatalf("recorded %q", got.LastError)
	}
}

// Rotation re-seals every org's secrets under the new key, all or none;
// run again, it has nothing to do.
func TestRotate(t *testing.T) {
	b := newBundle(t)
	old := b.svc.Key
	c1 := b.create(t, connect.Input{Name: "one", Kind: connect.KindOpenAI, APIKey: "sk-admin-one-0123456789"})
	org2, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	var c2 store.Connection
	err := b.st.Fenced(context.Background(), org2.ID, 0, func(st *store.Store) error {
		var err error
		c2, err = b.svc.Create(context.Background(), st, org2.ID, 0, connect.Input{Name: "two", Kind: connect.KindAnthropic, APIKey: "sk-ant-admin-two-0123"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// A Slack URL saved in clear before URLs were sealed, and a webhook URL
	// sealed under the old key: rotation seals the one and re-seals the
	// other.
	ctx := context.Background()
	clearURL, hookURL := "https://hooks.slack.com/services/T0001/B0001/clearclearclear", "https://alerts.example.com/hook/4f2a"
	if _, err := b.st.SetNotificationChannel(ctx, b.org.ID, 0, store.ChannelSlack, clearURL, "https://hooks.slack.com/…/lear", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.SetNotificationChannel(ctx, org2.ID, 0, store.ChannelWebhook, old.SealChannel(org2.ID, hookURL), "https://alerts.example.com/…/4f2a", 0); err != nil {
		t.Fatal(err)
	}
	nu, _ := newKey(t)
	wrong, _ := newKey(t)
	if _, _, err := connect.Rotate(context.Background(), b.st, wrong, nu); !errors.Is(err, seal.ErrWrongKey) {
		t.Fatalf("rotate from the wrong old key: %v", err)
	}
	if got := b.connection(t, c1.ID); got.Secret != c1.Secret {
		t.Fatal("a failed rotation changed a secret")
	}
	n, nch, err := connect.Rotate(context.Background(), b.st, old, nu)
	if err != nil || n != 2 || nch != 2 {
		t.Fatalf("rotate: %d connections, %d channels, %v", n, nch, err)
	}
	chs, err := b.st.AllNotificationChannels(ctx)
	if err != nil || len(chs) != 2 {
		t.Fatalf("channels %v %v", chs, err)
	}
	for _, ch := range chs {
		want := map[string]string{store.ChannelSlack: clearURL, store.ChannelWebhook: hookURL}[ch.Kind]
		if got, err := nu.OpenChannel(ch.OrgID, ch.URL); err != nil || got != want {
			t.Fatalf("%s channel under the new key: %q, %v", ch.Kind, got, err)
		}
	}
	var inClear bool
	if err := b.st.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM notification_channels WHERE url LIKE '%hooks.slack.com%' OR url LIKE '%example.com%' OR sealed_at IS NULL)`).Scan(&inClear); err != nil || inClear {
		t.Fatalf("a channel URL is still in clear after rotation (%v)", err)
	}
	for _, c := range []store.Connection{c1, c2} {
		got, err := b.st.Connection(context.Background(), c.OrgID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nu.Open(c.OrgID, got.Secret); err != nil {
			t.Fatalf("%s under the new key: %v", c.Name, err)
		}
		if _, err := old.Open(c.OrgID, got.Secret); !errors.Is(err, seal.ErrWrongKey) {
			t.Fatalf("%s still opens under the old key: %v", c.Name, err)
		}
	}
	if n, nch, err := connect.Rotate(context.Background(), b.st, old, nu); err != nil || n != 0 || nch != 0 {
		t.Fatalf("second rotate: %d, %d, %v", n, nch, err)
	}
}

// Credentials never print, however they are logged.
func TestCredentialsNeverPrint(t *testing.T) {
	c := connect.Credentials{APIKey: "sk-admin-PRINTED"}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("x", slog.Any("cred", c), slog.Any("ptr", &c))
	fmt.Fprintf(&buf, "%v %+v %#v %s %q", c, c, c, c, c)
	if strings.Contains(buf.String(), "PRINTED") {
		t.Fatalf("credentials printed: %s", buf.String())
	}
}

func TestInputValidation(t *testing.T) {
	b := newBundle(t)
	for _, tc := range []struct {
		in    connect.Input
		field string
	}{
		{connect.Input{Kind: connect.KindOpenAI, APIKey: "k"}, "name"},
		{connect.Input{Name: "a\x00b", Kind: connect.KindOpenAI, APIKey: "k"}, "name"},
		{connect.Input{Name: "x", Kind: "gcp", APIKey: "k"}, "kind"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI}, "api_key"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI, APIKey: "a b"}, "api_key"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI, APIKey: "k", StartDate: "2026-13-01"}, "start_date"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI, APIKey: "k", StartDate: "2019-01-01"}, "start_date"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI, APIKey: "k", RestateDays: "90"}, "restate_days"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI, APIKey: "k", RestateDays: "1e999999"}, "restate_days"},
		{connect.Input{Name: "x", Kind: connect.KindOpenAI, APIKey: "k", Data: "both"}, "data"},
	} {
		err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
			_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, tc.in)
			return err
		})
		var ie *connect.InputError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%+v: %v, want an error about %s", tc.in, err, tc.field)
		}
	}
	b.create(t, connect.Input{Name: "Prod", Kind: connect.KindOpenAI, APIKey: "sk-admin-0123456789"})
	err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
		_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, connect.Input{Name: "prod", Kind: connect.KindOpenAI, APIKey: "sk-admin-0123456789"})
		return err
	})
	var ie *connect.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "already") {
		t.Fatalf("a second connection of the same name: %v", err)
	}
}

// Another org's connection is out of reach through a fenced store.
func TestConnectionsFenced(t *testing.T) {
	b := newBundle(t)
	c := b.create(t, connect.Input{Name: "mine", Kind: connect.KindOpenAI, APIKey: "sk-admin-0123456789"})
	other, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	err := b.st.Fenced(context.Background(), other.ID, 0, func(st *store.Store) error {
		if _, err := st.Connection(context.Background(), b.org.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("read across orgs: %v", err)
		}
		if err := st.DeleteConnection(context.Background(), b.org.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete across orgs: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
