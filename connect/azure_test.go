package connect_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/store"
)

// Azurite's well-known development account (documented, not a secret).
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azuriteBinary finds Azurite's blob server: $AZURITE_BLOB, then PATH,
// then where scripts/test-deps installs it.
func azuriteBinary(t *testing.T) string {
	if p := os.Getenv("AZURITE_BLOB"); p != "" {
		return p
	}
	if p, err := exec.LookPath("azurite-blob"); err == nil {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "burnrate", "azurite", "node_modules", ".bin", "azurite-blob")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Azurite (the Azure Storage emulator) is not installed: run scripts/test-deps, or set AZURITE_BLOB (%v)", err)
	}
	return p
}

// fakeAzure is Azurite's blob service, started for the test, with a
// client to lay exports out in it.
type fakeAzure struct {
	endpoint string // http://127.0.0.1:PORT/devstoreaccount1
	client   *azblob.Client
}

func newAzurite(t *testing.T) *fakeAzure {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(azuriteBinary(t), "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
		"--inMemoryPersistence", "--silent", "--skipApiVersionCheck")
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("Azurite exited: %s", out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Azurite did not listen on %d within a minute: %s", port, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	f := &fakeAzure{endpoint: fmt.Sprintf("http://127.0.0.1:%d/%s", port, devAccount)}
	cred, err := azblob.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	if f.client, err = azblob.NewClientWithSharedKeyCredential(f.endpoint, cred, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CreateContainer(context.Background(), "costs", nil); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeAzure) put(t *testing.T, name string, body []byte) {
	t.Helper()
	if _, err := f.client.UploadBuffer(context.Background(), "costs", name, body, nil); err != nil {
		t.Fatal(err)
	}
}

// sas signs a SAS token for the container with perms ("rl", "l").
func (f *fakeAzure) sas(t *testing.T, perms string) string {
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	p := sas.ContainerPermissions{Read: strings.Contains(perms, "r"), List: strings.Contains(perms, "l")}
	q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		ContainerName: "costs", Permissions: p.String()}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

var azureHeader = []string{"BillingAccountId", "BillingPeriodStartDate", "BillingPeriodEndDate", "SubscriptionId", "Date",
	"MeterCategory", "MeterName", "ResourceId", "ResourceLocation", "ChargeType", "PricingModel", "Quantity", "UnitOfMeasure",
	"CostInBillingCurrency", "BillingCurrencyCode", "Tags"}

// azureCost writes an EA cost details export of month (YYYY-MM) for days
// [from, to]: a pay-as-you-go VM each day at rate, and a reserved one. An
// actual-cost export shows the reservation as its purchase and its usage
// at zero; an amortized one spreads it over the usage and adds the unused
// part. It returns the CSV and its total.
func azureCost(month string, from, to int, rate string, amortized bool) ([]byte, decimal.Decimal) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(azureHeader)
	m, _ := time.Parse("2006-01", month)
	start, end := m.Format("01/02/2006"), m.AddDate(0, 1, -1).Format("01/02/2006")
	total := decimal.Zero
	row := func(d int, meter, chargeType, model, cost string) {
		date := m.AddDate(0, 0, d-1).Format("01/02/2006")
		total = total.Add(decimal.RequireFromString(cost))
		w.Write([]string{"8611537", start, end, "1d2e3f40-aaaa-bbbb-cccc-1234567890ab", date, "Virtual Machines", meter,
			"/subscriptions/1d2e3f40/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/" + meter, "eastus",
			chargeType, model, "24", "1 Hour", cost, "USD", `"team": "ml"`})
	}
	for d := from; d <= to; d++ {
		payg := decimal.RequireFromString(rate).Mul(decimal.NewFromInt(24)).Add(decimal.New(int64(d), -4))
		row(d, "NC24ads A100 v4", "Usage", "OnDemand", payg.String())
		if amortized {
			row(d, "ND96asr A100 v4", "Usage", "Reservation", "500.25")
		} else {
			row(d, "ND96asr A100 v4", "Usage", "Reservation", "0")
		}
	}
	if amortized {
		row(to, "ND96asr A100 v4", "UnusedReservation", "Reservation", "12.5")
	} else {
		row(from, "ND96asr A100 v4 reservation", "Purchase", "Reservation", "15000")
	}
	w.Flush()
	return buf.Bytes(), total
}

// putRun lays out one run of a Cost Management export for the month as
// Cost Management writes it: a folder per run under the export's billing
// period, holding the parts and a manifest.json naming them.
func (f *fakeAzure) putRun(t *testing.T, export, kind, month, run, submitted string, parts ...[]byte) {
	t.Helper()
	m, _ := time.Parse("2006-01", month)
	dir := fmt.Sprintf("exports/burnrate/%s/%s-%s/%s", export, m.Format("20060102"), m.AddDate(0, 1, -1).Format("20060102"), run)
	var blobs []map[string]any
	for i, p := range parts {
		name := fmt.Sprintf("%s/part_%d_0001.csv.gz", dir, i)
		f.put(t, name, gz(t, p))
		blobs = append(blobs, map[string]any{"blobName": name, "byteCount": len(p)})
	}
	manifest, _ := json.Marshal(map[string]any{
		"manifestVersion": "2024-04-01", "byteCount": 0, "blobCount": len(parts),
		"exportConfig": map[string]any{"exportName": export, "type": kind, "dataVersion": "2021-10-01", "timeFrame": "MonthToDate"},
		"deliveryConfig": map[string]any{"partitionData": true, "dataOverwriteBehavior": "CreateNewReport", "fileFormat": "Csv",
			"compressionMode": "gzip", "rootFolderPath": "exports/burnrate"},
		"runInfo": map[string]any{"executionType": "Scheduled", "submittedTime": submitted, "runId": run,
			"startDate": m.Format("2006-01-02T15:04:05"), "endDate": m.AddDate(0, 1, -1).Format("2006-01-02T15:04:05")},
		"blobs": blobs,
	})
	f.put(t, dir+"/manifest.json", manifest)
}

// effective is the org's amortized cost in charges.
func (b *bundle) effective(t *testing.T) decimal.Decimal {
	t.Helper()
	var sum decimal.Decimal
	if err := b.st.Pool().QueryRow(context.Background(), `SELECT coalesce(sum(effective_cost), 0) FROM charges WHERE org_id = $1`, b.org.ID).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// The first sync imports each export's periods at their current run (an
// actual and an amortized export, kept side by side; November's actual
// run in two parts as one import); the second is a no-op; a new run of a
// period replaces that period of that export; a SAS token that may list
// but not read fails in plain words.
func TestAzureExport(t *testing.T) {
	b := newBundle(t)
	f := newAzurite(t)
	octA, octATotal := azureCost("2026-10", 1, 31, "3.673", false)
	octM, octMTotal := azureCost("2026-10", 1, 31, "3.673", true)
	novA1, n1 := azureCost("2026-11", 1, 10, "3.673", false)
	novA2, n2 := azureCost("2026-11", 11, 19, "3.673", false)
	novM, novMTotal := azureCost("2026-11", 1, 19, "3.673", true)
	f.putRun(t, "burnrate-actual", "ActualCost", "2026-10", "1b7c-oct", "2026-11-02T06:00:00Z", octA)
	f.putRun(t, "burnrate-amortized", "AmortizedCost", "2026-10", "5d1e-oct", "2026-11-02T06:05:00Z", octM)
	f.putRun(t, "burnrate-actual", "ActualCost", "2026-11", "0a1b-nov-1", "2026-11-19T06:00:00Z", novA1, novA2)
	f.putRun(t, "burnrate-amortized", "AmortizedCost", "2026-11", "9f8e-nov-1", "2026-11-19T06:05:00Z", novM)
	// Not a run: a stray file beside the exports.
	f.put(t, "exports/burnrate/README.txt", []byte("exports land here"))

	c := b.create(t, connect.Input{Name: "Azure", Kind: connect.KindAzure, Account: devAccount, Container: "costs",
		Prefix: "exports/burnrate", EndpointURL: f.endpoint, AccountKey: devKey})
	if c.SecretHint != "…Gw==" || strings.Contains(string(c.Secret), devKey[:20]) {
		t.Fatalf("hint %q", c.SecretHint)
	}
	res := syncNow(t, b, c.ID)
	if len(res.Imports) != 4 || res.Rows != 63+63+40+39 {
		t.Fatalf("first sync: %d imports, %d rows: %+v", len(res.Imports), res.Rows, res)
	}
	bases := map[string]int{}
	for _, imp := range res.Imports {
		if imp.Source != "azure-cost" {
			t.Fatalf("source %q", imp.Source)
		}
		bases[imp.CostBasis]++
	}
	if bases["billed"] != 2 || bases["amortized"] != 2 {
		t.Fatalf("cost bases %v", bases)
	}
	if got, want := b.billed(t), octATotal.Add(n1).Add(n2); !got.Equal(want) {
		t.Fatalf("billed %s, want the actual exports' %s", got, want)
	}
	if got, want := b.effective(t), octMTotal.Add(novMTotal); !got.Equal(want) {
		t.Fatalf("amortized %s, want the amortized exports' %s", got, want)
	}
	imps, _ := b.st.Imports(context.Background(), b.org.ID, 10)
	if imps[0].Via != "connection Azure" || !strings.Contains(imps[0].FileName, "burnrate-amortized AmortizedCost 20261101-20261130 9f8e-nov-1") {
		t.Fatalf("history %+v", imps[0])
	}

	res = syncNow(t, b, c.ID)
	if len(res.Imports) != 0 || res.Rows != 0 {
		t.Fatalf("second sync imported %+v", res.Imports)
	}

	// A new run of November's actual cost: it replaces November's actual
	// rows, and leaves October and the amortized view alone.
	novA3, n3 := azureCost("2026-11", 1, 20, "3.9", false)
	f.putRun(t, "burnrate-actual", "ActualCost", "2026-11", "0a1b-nov-2", "2026-11-20T06:00:00Z", novA3)
	res = syncNow(t, b, c.ID)
	if len(res.Imports) != 1 || res.Imports[0].ReplacedRows != 40 || res.Rows != 2*20+1 {
		t.Fatalf("third sync %+v", res)
	}
	if got, want := b.billed(t), octATotal.Add(n3); !got.Equal(want) {
		t.Fatalf("billed %s after the new run, want %s", got, want)
	}
	if got, want := b.effective(t), octMTotal.Add(novMTotal); !got.Equal(want) {
		t.Fatalf("amortized %s after the new actual run, want %s", got, want)
	}

	// A SAS token that may list the container but not read its blobs.
	novA4, _ := azureCost("2026-11", 1, 21, "3.9", false)
	f.putRun(t, "burnrate-actual", "ActualCost", "2026-11", "0a1b-nov-3", "2026-11-21T06:00:00Z", novA4)
	listOnly := b.create(t, connect.Input{Name: "Azure list only", Kind: connect.KindAzure, Container: "costs", Prefix: "exports/burnrate",
		EndpointURL: f.endpoint, SASToken: f.sas(t, "l")})
	if _, err := b.svc.Sync(context.Background(), b.org.ID, listOnly.ID); err == nil {
		t.Fatal("a refused read succeeded")
	}
	got := b.connection(t, listOnly.ID)
	want := "403 from Azure Storage: the credentials may not read exports/burnrate/burnrate-actual/20261001-20261031/1b7c-oct/manifest.json (AuthorizationPermissionMismatch): a SAS token needs Read (sp=r); a role, Storage Blob Data Reader"
	if got.LastError != want {
		t.Fatalf("error %q\nwant  %q", got.LastError, want)
	}
	if b2 := b.billed(t); !b2.Equal(octATotal.Add(n3)) {
		t.Fatal("a failed pull changed the spend")
	}

	// A SAS URL of the container, as the portal prints it, with Read and
	// List: the same export, read with it, is the same files (duplicates).
	sasURL := f.endpoint + "/costs?" + f.sas(t, "rl")
	viaSAS := b.create(t, connect.Input{Name: "Azure SAS", Kind: connect.KindAzure, Prefix: "exports/burnrate/burnrate-amortized", SASToken: sasURL})
	if viaSAS.SecretHint == "" || !strings.HasPrefix(viaSAS.SecretHint, "SAS token, expires ") {
		t.Fatalf("SAS hint %q", viaSAS.SecretHint)
	}
	res = syncNow(t, b, viaSAS.ID)
	if len(res.Imports) != 2 || !res.Imports[0].Duplicate || !res.Imports[1].Duplicate {
		t.Fatalf("sync through a SAS URL %+v", res)
	}
}

func TestAzureMistakes(t *testing.T) {
	b := newBundle(t)
	f := newAzurite(t)
	c := b.create(t, connect.Input{Name: "empty", Kind: connect.KindAzure, Account: devAccount, Container: "costs", Prefix: "nothing/here",
		EndpointURL: f.endpoint, AccountKey: devKey})
	if err := b.svc.Test(context.Background(), c); err == nil || !strings.Contains(err.Error(), `no export runs under container costs, prefix "nothing/here"`) {
		t.Fatalf("test of an empty prefix: %v", err)
	}
	c = b.create(t, connect.Input{Name: "nocontainer", Kind: connect.KindAzure, Account: devAccount, Container: "missing",
		EndpointURL: f.endpoint, AccountKey: devKey})
	if err := b.svc.Test(context.Background(), c); err == nil || err.Error() != "404 from Azure Storage: the container does not exist" {
		t.Fatalf("test of a missing container: %v", err)
	}
	wrongKey := strings.Replace(devKey, "Eby8", "Aby8", 1)
	c = b.create(t, connect.Input{Name: "wrongkey", Kind: connect.KindAzure, Account: devAccount, Container: "costs",
		EndpointURL: f.endpoint, AccountKey: wrongKey})
	if err := b.svc.Test(context.Background(), c); err == nil || !strings.HasPrefix(err.Error(), "403 from Azure Storage: the account key or SAS token was refused (") {
		t.Fatalf("test with a wrong key: %v", err)
	}
	for _, in := range []connect.Input{
		{Name: "x", Kind: connect.KindAzure, Account: "Bad_Account", Container: "costs", AccountKey: devKey},
		{Name: "x", Kind: connect.KindAzure, Account: devAccount, Container: "x", AccountKey: devKey},
		{Name: "x", Kind: connect.KindAzure, Account: devAccount, Container: "costs"},
		{Name: "x", Kind: connect.KindAzure, Account: devAccount, Container: "costs", AccountKey: devKey, SASToken: "sv=1&sig=2"},
		{Name: "x", Kind: connect.KindAzure, Account: devAccount, Container: "costs", SASToken: "sv=2024-01-01"},
		{Name: "x", Kind: connect.KindAzure, Container: "costs", AccountKey: devKey, EndpointURL: f.endpoint},
		{Name: "x", Kind: connect.KindAzure, Account: devAccount, Container: "costs", AccountKey: devKey, EndpointURL: "file:///etc"},
	} {
		err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
			_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, in)
			return err
		})
		if _, ok := err.(*connect.InputError); !ok {
			t.Errorf("%+v: %v, want an input error", in, err)
		}
	}
}

// TestAzureMissingFieldsAtOnce: a blank Azure form is refused naming every
// field it lacks, not one a try.
func TestAzureMissingFieldsAtOnce(t *testing.T) {
	b := newBundle(t)
	err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
		_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, connect.Input{Name: "x", Kind: connect.KindAzure})
		return err
	})
	var fields []string
	for _, ie := range connect.InputErrors(err) {
		fields = append(fields, ie.Field)
	}
	if got := strings.Join(fields, ","); got != "account,container,account_key" {
		t.Errorf("fields refused: %q (%v)", got, err)
	}
}
