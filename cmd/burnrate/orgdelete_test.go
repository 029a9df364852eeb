package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestOrgDeleteCommand: 'org delete' asks for --yes, then deletes the org
// (the store's DeleteOrg, tested with the rows it removes), and says so;
// an unknown slug is named.
func TestOrgDeleteCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Gone Co"})
	orgCmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"org"}, args...),
			env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
		return out.String(), err
	}
	if _, err := orgCmd("delete", "--org", org.Slug); err == nil || !strings.Contains(err.Error(), "add --yes") {
		t.Fatalf("without --yes: %v", err)
	}
	if _, err := st.OrgBySlug(ctx, org.Slug); err != nil {
		t.Fatalf("the org went without --yes: %v", err)
	}
	out, err := orgCmd("delete", "--org", org.Slug, "--yes")
	if err != nil || out != "deleted org "+org.Slug+" (Gone Co)\n" {
		t.Fatalf("delete: %q, %v", out, err)
	}
	if _, err := st.OrgBySlug(ctx, org.Slug); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the org after delete: %v", err)
	}
	if _, err := orgCmd("delete", "--org", org.Slug, "--yes"); err == nil || !strings.Contains(err.Error(), `no org with slug "`+org.Slug+`"`) {
		t.Fatalf("deleting it again: %v", err)
	}
}
