package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
)

// File is one file a pull hands the importer: what an upload would be.
// A puller that reads a bucket opens it lazily; an API puller has written
// it in memory. Source is set when the puller knows it (an API's report);
// a bucket's export is detected from its header, as an upload is.
type File struct {
	Name   string
	Source ingest.Source
	Rows   int // data rows written; a file of none is not imported
	Open   func(ctx context.Context) (io.ReadCloser, error)
	// Done records in the state what this file's import means (a billing
	// period's version imported), once the import committed.
	Done func(st *State)
	// Skip says there is nothing to import (a query with no rows); Done
	// still records what the pull did.
	Skip bool
}

func memFile(name string, src ingest.Source, rows int, b []byte) File {
	return File{Name: name, Source: src, Rows: rows, Open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}}
}

// pull is one run of a puller: the connection, its settings, credentials
// and state, and the window a time-bucketed API is asked for.
type pull struct {
	conn  store.Connection
	set   Settings
	cred  Credentials
	state State
	now   time.Time
}

// window is the days an API run asks for: from the start date on the
// first run; after that, from RestateDays before today, or before the day
// the last run reached if that is earlier (a gap while paused is filled).
// It ends with today (UTC), whose bucket is still filling. Two runs on one
// day ask for the same window, so that when nothing changed the file is
// the same and its import a no-op.
func (p pull) window() (from, to time.Time) {
	today := day(p.now)
	to = today.AddDate(0, 0, 1)
	from, _ = time.Parse(time.DateOnly, p.set.StartDate)
	if t, err := time.Parse(time.DateOnly, p.state.SyncedThrough); err == nil {
		if t.After(today) {
			t = today
		}
		if back := t.AddDate(0, 0, -p.set.RestateDays); back.After(from) {
			from = back
		}
	}
	return from, to
}

// puller turns what a provider serves into files.
type puller interface {
	// files fetches what is new and returns the files to import in order.
	// The state's window is advanced by the caller.
	files(ctx context.Context, s *Service, p pull) ([]File, error)
	// test makes the smallest call that proves the credentials work.
	test(ctx context.Context, s *Service, p pull) error
}

func pullerFor(name string) (puller, error) {
	if k, ok := kindOf(name); ok {
		return k.puller, nil
	}
	return nil, fmt.Errorf("connections of kind %q are not supported by this version of Burnrate", name)
}

// Result is what one sync did.
type Result struct {
	Connection string                `json:"connection"`
	Imports    []ingest.ImportResult `json:"imports"`
	Rows       int64                 `json:"rows"`
	Error      string                `json:"error,omitempty"`
}

// Sync pulls orgID's connection id now and imports what it finds, fenced
// to the org. The outcome is recorded on the connection (last run, rows,
// error in plain words, next run) whatever it is. The error returned is
// the run's failure, for a job to decide on retrying (Transient).
func (s *Service) Sync(ctx context.Context, orgID, id int64) (Result, error) {
	var (
		conn store.Connection
		org  store.Org
	)
	err := s.Store.Fenced(ctx, orgID, 0, func(st *store.Store) error {
		var err error
		if conn, err = st.Connection(ctx, orgID, id); err != nil {
			return err
		}
		org, err = st.Org(ctx, orgID)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	res := Result{Connection: conn.Name}
	state, runErr := s.run(ctx, org, conn, &res)
	runErr = shown(runErr)
	run := store.ConnectionRun{At: s.now(), Status: "ok", Rows: res.Rows, NextRunAt: s.now().Add(s.interval())}
	if runErr != nil {
		run.Status, run.Error, run.Fix = "failed", runErr.Error(), Fix(runErr)
		res.Error = runErr.Error()
		if Transient(runErr) {
			// Soon, not at the next interval: the job retries with
			// backoff, and the schedule picks it up after.
			run.NextRunAt = s.now().Add(time.Hour)
		}
		s.log().WarnContext(ctx, "connection sync failed", slog.Int64("org_id", orgID), slog.Int64("connection_id", id), slog.String("error", runErr.Error()))
	}
	if state != nil {
		b, err := json.Marshal(state)
		if err != nil {
			return res, err
		}
		run.State = b
	}
	ctx = context.WithoutCancel(ctx)
	err = s.Store.Fenced(ctx, orgID, 0, func(st *store.Store) error {
		_, err := st.RecordConnectionRun(ctx, orgID, id, run)
		return err
	})
	if err == nil {
		// A failure streak, or data that stopped advancing, is told to the
		// org's admins once; a recovery too.
		err = s.notice(ctx, org, id)
	}
	return res, errors.Join(runErr, err)
}

// run pulls and imports; the state it returns (nil: unchanged) holds what
// the committed imports mean, also after a failure part way.
func (s *Service) run(ctx context.Context, org store.Org, conn store.Connection, res *Result) (*State, error) {
	p, pl, err := s.prepare(conn)
	if err != nil {
		return nil, err
	}
	files, err := pl.files(ctx, s, p)
	if err != nil {
		return nil, err
	}
	_, to := p.window()
	state := p.state
	changed := false
	for _, f := range files {
		if f.Skip && f.Done != nil {
			f.Done(&state)
			changed = true
		}
		if f.Skip || f.Rows == 0 && f.Done == nil {
			continue // nothing in the window: an empty file would fail as header-only
		}
		ir, err := s.importFile(ctx, org, conn, f)
		if err != nil {
			if changed {
				return &state, err
			}
			return nil, err
		}
		res.Imports = append(res.Imports, ir)
		if !ir.Duplicate {
			res.Rows += ir.Rows
		}
		if f.Done != nil {
			f.Done(&state)
			changed = true
		}
	}
	if k, _ := kindOf(conn.Kind); k.windowed {
		state.SyncedThrough = to.Format(time.DateOnly)
		changed = true
	}
	if !changed {
		return nil, nil
	}
	return &state, nil
}

func (s *Service) prepare(conn store.Connection) (pull, puller, error) {
	pl, err := pullerFor(conn.Kind)
	if err != nil {
		return pull{}, nil, err
	}
	p := pull{conn: conn, now: s.now()}
	if err := json.Unmarshal(conn.Settings, &p.set); err != nil {
		return p, nil, fmt.Errorf("the connection's settings are damaged: %w", err)
	}
	if len(conn.State) > 0 {
		if err := json.Unmarshal(conn.State, &p.state); err != nil {
			return p, nil, fmt.Errorf("the connection's state is damaged: %w", err)
		}
	}
	if p.set.RestateDays <= 0 {
		p.set.RestateDays = DefaultRestateDays
	}
	if p.cred, err = s.credentials(conn); err != nil {
		return p, nil, err
	}
	// Saved by an older version, or before the operator changed their
	// mind: the rule holds at every run, not only when saved.
	if err := s.checkCredentials(conn.Kind, p.cred); err != nil {
		return p, nil, err
	}
	return p, pl, nil
}

// importFile imports f as an upload would be: fenced to the org, priced at
// its own LLM prices, recorded "via connection NAME".
func (s *Service) importFile(ctx context.Context, org store.Org, conn store.Connection, f File) (ingest.ImportResult, error) {
	rc, err := f.Open(ctx)
	if err != nil {
		return ingest.ImportResult{}, err
	}
	defer rc.Close()
	var res ingest.ImportResult
	err = s.Store.Fenced(ctx, org.ID, 0, func(st *store.Store) error {
		prices, err := advisor.LoadOrgPrices(ctx, st, org.ID, advisor.PriceOverrides, s.now())
		if err != nil {
			return err
		}
		res, err = s.Importer.With(st).Import(ctx, ingest.ImportRequest{
			Org: org, FileName: f.Name, Source: f.Source, Via: "connection " + conn.Name, ConnectionID: conn.ID,
			Pricer: ingest.PriceTable(prices.LLM),
		}, rc)
		return err
	})
	return res, err
}

// Test makes the smallest call that proves conn's credentials and settings
// work, and says what is wrong in plain words when they do not.
func (s *Service) Test(ctx context.Context, conn store.Connection) error {
	p, pl, err := s.prepare(conn)
	if err != nil {
		return err
	}
	return shown(pl.test(ctx, s, p))
}
