package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestCitusDistributeNeedsCitus: on one Postgres, 'citus distribute' says
// what to set up first and changes nothing; without DATABASE_URL it says
// the private cluster has no workers. On a Citus cluster it runs in
// scripts/citus-check.
func TestCitusDistributeNeedsCitus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	distribute := func(vars map[string]string) error {
		vars["LOG_LEVEL"] = "error"
		return run(ctx, []string{"citus", "distribute"}, env(vars), &bytes.Buffer{}, &bytes.Buffer{})
	}
	if err := distribute(map[string]string{"DATABASE_URL": url}); err == nil ||
		!strings.Contains(err.Error(), "citus distribute: the citus extension is not installed in this database") {
		t.Errorf("on one Postgres: %v", err)
	}
	if err := distribute(map[string]string{"BURNRATE_DATA_DIR": t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "set DATABASE_URL") {
		t.Errorf("without DATABASE_URL: %v", err)
	}
}
