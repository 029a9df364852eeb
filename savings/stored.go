package savings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
)

// StoredFormat is the version of the stored report's computation and
// encoding: change it whenever a finder, a threshold or Report's fields
// change, so that every stored report is recomputed (a new binary does that
// too, see build).
const StoredFormat = "2"

// Stored returns org's report with DefaultOptions at now: the stored one
// when it was computed from what Find would read now, otherwise Find's,
// which it stores (docs/savings.md, "The stored report"). The inputs are
// cheap to read (the window's days from daily_spend's key, fingerprints of
// the imports and price overrides), unlike the finders' 30 days of GPU
// rollup. A stored report never outlives its inputs; a refresh job
// (RefreshArgs) only computes it before someone asks.
func Stored(ctx context.Context, st *store.Store, org store.Org, now time.Time) (Report, error) {
	rep, _, err := stored(ctx, st, org, now)
	return rep, err
}

// Load is the report with opts: the stored one (Stored) when opts are the
// defaults, which is what the digest and the Savings page open with; Find's
// for any other what-if.
func Load(ctx context.Context, st *store.Store, org store.Org, opts Options) (Report, error) {
	def := DefaultOptions()
	if opts.RoutingShare.Equal(def.RoutingShare) && opts.CommitDiscount.Equal(def.CommitDiscount) {
		return Stored(ctx, st, org, opts.Now)
	}
	return Find(ctx, st, org, opts)
}

// stored is Stored, also saying whether it computed the report.
func stored(ctx context.Context, st *store.Store, org store.Org, now time.Time) (Report, bool, error) {
	if now.IsZero() {
		now = time.Now()
	}
	opts := DefaultOptions()
	opts.Now = now
	// The inputs are read before the bills Find reads: an import that
	// commits in between makes the stored inputs older than the report, and
	// the next call computes again; never the other way round. Of two
	// computations that overlap, the one that read its inputs last is kept
	// (asOf).
	sources, asOf, err := st.SavingsSources(ctx, org.ID)
	if err != nil {
		return Report{}, false, wrap(err)
	}
	b, err := billDays(ctx, st, org, now)
	if err != nil {
		return Report{}, false, err
	}
	in := inputs(org, opts, b, sources)
	saved, ok, err := st.SavingsReport(ctx, org.ID)
	if err != nil {
		return Report{}, false, wrap(err)
	}
	if ok && saved.Inputs == in {
		rep, err := decodeReport(saved.Report, org.Location())
		if err == nil {
			return rep, false, nil
		}
		// A report this build cannot read is computed again.
	}
	rep, err := find(ctx, st, org, opts, now, b)
	if err != nil {
		return Report{}, false, err
	}
	js, err := encodeReport(rep)
	if err != nil {
		return Report{}, false, wrap(err)
	}
	return rep, true, wrap(st.PutSavingsReport(ctx, org.ID, in, js, asOf))
}

// inputs names everything a default report is computed from: any change
// to them gives another text. The catalogs are the shipped ones (their
// source and date), the org's overrides are in sources.
func inputs(org store.Org, opts Options, b bills, sources string) string {
	window := "none"
	if b.ok {
		window = dateOf(b.from) + ".." + dateOf(b.to) + " first=" + dateOf(b.first)
	}
	cat, llm := pricing.DefaultCatalog(), pricing.DefaultLLMPrices()
	return fmt.Sprintf("format=%s build=%s tz=%s window=%s %s gpu-catalog=%q/%q llm-catalog=%q/%q share=%s commit=%s",
		StoredFormat, build(), org.TimeZone, window, sources, cat.Source, cat.AsOf, llm.Source, llm.AsOf,
		opts.RoutingShare, opts.CommitDiscount)
}

// build names the binary: its source revision when the build recorded
// one, else the executable's size and modification time. A deploy with
// changed finders thus recomputes the reports even if StoredFormat was not
// changed (images built without .git record no revision); "" when neither
// is known.
var build = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" && modified != "true" {
			return rev
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("exe:%d@%d", fi.Size(), fi.ModTime().Unix())
})

// storedReport is the stored encoding: the report as the API writes it,
// and the findings' keys, which the JSON leaves out.
type storedReport struct {
	Report
	Keys []string `json:"keys"`
}

func encodeReport(rep Report) ([]byte, error) {
	s := storedReport{Report: rep, Keys: make([]string, len(rep.Findings))}
	for i, f := range rep.Findings {
		s.Keys[i] = f.key
	}
	return json.Marshal(s)
}

// decodeReport reads a stored report back, its bounds in the org's time
// zone as Find gives them.
func decodeReport(js []byte, loc *time.Location) (Report, error) {
	var s storedReport
	if err := json.Unmarshal(js, &s); err != nil {
		return Report{}, err
	}
	if len(s.Keys) != len(s.Findings) {
		return Report{}, errors.New("savings: stored report: keys do not match findings")
	}
	for i := range s.Findings {
		s.Findings[i].key = s.Keys[i]
	}
	rep := s.Report
	if !rep.From.IsZero() {
		rep.From, rep.To = rep.From.In(loc), rep.To.In(loc)
	}
	return rep, nil
}

// RefreshArgs computes and stores an org's default report (Stored) in the
// background: after an import, an import's removal and a change to the
// org's price overrides, so that the digest and the Savings page find it
// ready. One that runs while an import commits must not swallow the
// import's (see EnqueueRefresh), and a repeated one finds the report
// current and does nothing.
type RefreshArgs struct {
	OrgID int64 `json:"org_id"`
}

// Kind is the job's kind, as stored.
func (RefreshArgs) Kind() string { return "savings_refresh" }

// RefreshDelay is how long after the change that asks for it a refresh is
// due (River's scheduler makes it available up to 5 s later still). The
// report takes about 100 ms of a small server's CPUs for an org with 10
// million charges, and run at once it lands on the dashboard view that
// typically follows an import: that view's p95 goes from 15 ms to about
// 30 (`benchdash hit -imports-only`, 2 CPUs). Whoever reads the report
// sooner computes it (Stored).
const RefreshDelay = 5 * time.Second

// EnqueueRefresh enqueues orgID's refresh, due after RefreshDelay, in st's
// transaction, so that it exists exactly when the change that asks for it
// commits. Refreshes due in the same RefreshDelay-long slot of time are
// one job, so a burst of imports computes the report once or twice, not
// once each. A running refresh is never that job: it was due at least
// RefreshDelay before this one, so in an earlier slot.
func EnqueueRefresh(ctx context.Context, q *jobs.Queue, st *store.Store, orgID int64) error {
	_, err := q.Insert(ctx, st, RefreshArgs{OrgID: orgID}, &river.InsertOpts{
		ScheduledAt: time.Now().Add(RefreshDelay),
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: RefreshDelay, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled}},
	})
	return err
}

// RefreshWorker works RefreshArgs on the unfenced store.
type RefreshWorker struct {
	river.WorkerDefaults[RefreshArgs]
	Store *store.Store
	// Now is the clock (time.Now when nil), for tests.
	Now func() time.Time
}

// Work implements river.Worker. An org deleted since is no error.
func (w *RefreshWorker) Work(ctx context.Context, job *river.Job[RefreshArgs]) error {
	org, err := w.Store.Org(ctx, job.Args.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	_, err = Stored(ctx, w.Store, org, now)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted while the report was computed
	}
	return err
}
