package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestRequestsSurviveDroppedConnections drops, from the database's side,
// every connection the server's pool holds, as a database restart does, and
// asks again at once: the API (token lookup, then a fenced connection), a
// logged-in page and /healthz must all answer, rather than each stale
// connection failing a request on its way out of the pool.
func TestRequestsSurviveDroppedConnections(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Steady"})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	pool := b.st.Pool()

	admin, err := pgx.Connect(ctx(), pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx())

	for round := range 2 {
		// Every connection of the pool, all used just now.
		conns := make([]*pgxpool.Conn, pool.Config().MaxConns)
		for i := range conns {
			if conns[i], err = pool.Acquire(ctx()); err != nil {
				t.Fatal(err)
			}
		}
		for _, cn := range conns {
			cn.Release()
		}
		const others = `FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
		if _, err := admin.Exec(ctx(), `SELECT pg_terminate_backend(pid) `+others); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			var left int
			if err := admin.QueryRow(ctx(), `SELECT count(*) `+others).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d backends still there after pg_terminate_backend", left)
			}
			time.Sleep(5 * time.Millisecond)
		}

		for i := range 3 {
			rec := httptest.NewRecorder()
			b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend?from=2026-01-01&to=2026-01-31", token, ""))
			if rec.Code != http.StatusOK {
				t.Fatalf("round %d: API request %d after the database dropped the pool's connections: %d %s", round, i, rec.Code, rec.Body)
			}
			if rec := c.get("/dashboard"); rec.Code != http.StatusOK {
				t.Fatalf("round %d: page %d after the database dropped the pool's connections: %d", round, i, rec.Code)
			}
			rec = httptest.NewRecorder()
			b.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("round %d: /healthz %d after the database dropped the pool's connections: %d %s", round, i, rec.Code, rec.Body)
			}
		}
	}
}
