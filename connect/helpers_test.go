package connect_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/netip"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/connect/egress"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// newKey makes a random SECRET_KEY, as `openssl rand -base64 32` would.
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

// bundle is a test's database, service and org.
type bundle struct {
	st  *store.Store
	svc *connect.Service
	org store.Org
	now time.Time
}

func newBundle(t testing.TB) *bundle {
	t.Helper()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	key, _ := newKey(t)
	b := &bundle{st: st, org: org, now: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	b.svc = &connect.Service{
		Store:    st,
		Importer: ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog()),
		Key:      key,
		Retry:    connect.Retry{Attempts: 3, Wait: time.Millisecond, MaxWait: 5 * time.Millisecond},
		// The fake providers listen on loopback, which an operator allows
		// as a self-hosted MinIO or Azurite would be.
		Egress: egress.Policy{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}},
		Now:    func() time.Time { return b.now },
	}
	return b
}

// create saves a connection through the service, as the pages do.
func (b *bundle) create(t testing.TB, in connect.Input) store.Connection {
	t.Helper()
	var c store.Connection
	err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
		var err error
		c, err = b.svc.Create(context.Background(), st, b.org.ID, 0, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (b *bundle) connection(t testing.TB, id int64) store.Connection {
	t.Helper()
	c, err := b.st.Connection(context.Background(), b.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// billed is the org's billed cost in charges and in daily_spend, which
// must agree.
func (b *bundle) billed(t testing.TB) decimal.Decimal {
	t.Helper()
	var charges, daily decimal.Decimal
	err := b.st.Pool().QueryRow(context.Background(), `
		SELECT (SELECT coalesce(sum(billed_cost), 0) FROM charges WHERE org_id = $1),
		       (SELECT coalesce(sum(billed), 0) FROM daily_spend WHERE org_id = $1)`, b.org.ID).Scan(&charges, &daily)
	if err != nil {
		t.Fatal(err)
	}
	if !charges.Equal(daily) {
		t.Fatalf("charges sum to %s, daily_spend to %s", charges, daily)
	}
	return charges
}

// TestEveryKindHasALag: freshness knows how late each kind of connection's
// data may normally be.
func TestEveryKindHasALag(t *testing.T) {
	t.Parallel()
	for _, k := range connect.Kinds() {
		if !freshness.KnowsConnection(k) {
			t.Errorf("freshness has no usual format for connections of kind %q", k)
		}
	}
}
