package store_test

import (
	"context"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestStoreCleansNames: whichever way a name comes in (a page, the API,
// the CLI), the store keeps it without line breaks or bidirectional
// overrides.
func TestStoreCleansNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	u, err := st.CreateUser(ctx, "ann@example.com", "Ann\r\nBcc: x@example.com", "hash")
	if err != nil {
		t.Fatal(err)
	}
	org, err := st.CreateOrg(ctx, "Acme\u202e lmth.exe", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := st.CreateAPIToken(ctx, org.ID, "ci\tbot\n", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "bill\u2066s\u2069.csv", Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "Ann Bcc: x@example.com" || org.Name != "Acme lmth.exe" || tok.Name != "ci bot" || imp.FileName != "bills.csv" {
		t.Fatalf("kept %q, %q, %q, %q", u.Name, org.Name, tok.Name, imp.FileName)
	}
}
