package store_test

import (
	"context"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// globalLookups are the tenant tables with a unique key that does not lead
// with org_id, and why. Each is looked up by a secret before anyone knows
// which org it belongs to, so the key must be unique across orgs. On a
// cluster that distributes by org_id (docs/operations.md, "Distributing by
// org") these stay on the coordinator, undistributed.
var globalLookups = map[string]string{
	"api_tokens": "a token's hash is looked up on every API request, before its org is known",
	"invites":    "an invite's hash is looked up from the link, before the invitee belongs to the org",
	"sessions":   "a session's cookie is looked up before its org; org_id is the org being viewed, and may be none",
	"outbox":     "system mail (password resets, sign-up notices) belongs to no org",
	"stripe_events": "Stripe's event ids are Stripe's, unique across orgs; the one webhook endpoint records an event " +
		"before it knows its org",
}

// unfenced are the tenant tables without row-level security: read by the
// app itself before any org is known, never through a request's fence.
var unfenced = map[string]string{
	"sessions":      "read by cookie, before any org is known",
	"stripe_events": "written and read by the Stripe webhook, which acts for no one org",
}

// TestTenantTablesLeadWithOrgID keeps the schema distributable by org: every
// table with an org_id column has row-level security, and its primary key
// and unique indexes lead with org_id, so that each org's rows of it can
// live on one node and a unique check never needs another node. A new
// tenant table that breaks this fails here; a deliberate exception goes in
// globalLookups with its reason.
func TestTenantTablesLeadWithOrgID(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()

	rows, err := st.Pool().Query(ctx, `
		SELECT c.relname, c.relrowsecurity, i.indexrelid::regclass::text,
		       (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = i.indkey[0])
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_index i ON i.indrelid = c.oid AND (i.indisunique OR i.indisprimary)
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
		  AND EXISTS (SELECT 1 FROM pg_attribute a
		              WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
		ORDER BY 1, 3`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tables := map[string]bool{}
	for rows.Next() {
		var table string
		var rls bool
		var index, lead *string
		if err := rows.Scan(&table, &rls, &index, &lead); err != nil {
			t.Fatal(err)
		}
		tables[table] = true
		if _, ok := unfenced[table]; !rls && !ok {
			t.Errorf("%s has an org_id but no row-level security", table)
		}
		if index == nil || (lead != nil && *lead == "org_id") {
			continue
		}
		if _, ok := globalLookups[table]; !ok {
			t.Errorf("%s: unique index %s does not lead with org_id", table, *index)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 15 {
		t.Fatalf("found only %d tenant tables: is the query still right?", len(tables))
	}
	for table := range globalLookups {
		if !tables[table] {
			t.Errorf("globalLookups names %s, which is not a tenant table any more", table)
		}
	}
}

// TestEveryTableHasADistributionDecision: every table of the migrated
// schema, River's included, has a decision in store.Distribution (where it
// lives on Citus, and why), and every decision names a table: a migration
// that adds a table fails here until it says where the table goes. A
// table with an org_id is distributed by it, unless it is a global lookup
// (kept on the coordinator) or a reference table.
func TestEveryTableHasADistributionDecision(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	rows, err := st.Pool().Query(ctx, `
		SELECT c.relname, EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
		FROM pg_class c
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')`)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for rows.Next() {
		var table string
		var orgID bool
		if err := rows.Scan(&table, &orgID); err != nil {
			t.Fatal(err)
		}
		tables[table] = true
		d, ok := store.Distribution[table]
		switch {
		case !ok:
			t.Errorf("table %s has no distribution decision: add it to store.Distribution (docs/operations.md, \"Distributing by org\")", table)
		case d.Why == "":
			t.Errorf("table %s: the decision says no why", table)
		case orgID && d.Placement == store.Coordinator && globalLookups[table] == "":
			t.Errorf("table %s has an org_id but stays on the coordinator, and is no global lookup", table)
		case orgID && d.Placement == store.Distributed && globalLookups[table] != "":
			t.Errorf("table %s is distributed, but its unique key is global (globalLookups)", table)
		case !orgID && d.Placement == store.Distributed:
			t.Errorf("table %s is distributed by org_id, which it does not have", table)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for table := range store.Distribution {
		if !tables[table] {
			t.Errorf("store.Distribution decides for %s, which is not a table of the schema", table)
		}
	}
}
