package freshness

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/store"
)

// Source is one source of an org's spend and how far its data reaches: a
// format from a provider, pulled by one connection or uploaded.
type Source struct {
	Source       string // the format: aws-cur, openai-costs, …
	Kind         Kind
	Provider     string
	Connection   string // the connection that pulls it; "" for uploads
	ConnectionID int64
	// Through is how far its data reaches: the newest end of a charge
	// period of at most a day delivered (store.ImportExtent).
	Through    time.Time
	LastImport time.Time
	Lag        time.Duration // expected: Kind's, and a sync interval for a connection
	Accounts   []Account     // per billing account, the latest first
}

// Account is how far one billing account of a Source reaches.
type Account struct {
	ID      string
	Through time.Time
}

// Name is the source as people read it: "AWS", "AWS (via connection
// CUR prod)"; the format when it has no provider.
func (s Source) Name() string {
	n := s.Provider
	if n == "" {
		n = s.Kind.Name
	}
	if s.Connection != "" {
		n += " (via connection " + s.Connection + ")"
	}
	return n
}

// LastDay is the last day, in loc, that the source has data of (all of it
// when Through is that day's end, part of it otherwise).
func (s Source) LastDay(loc *time.Location) time.Time {
	return budget.Day(s.Through.Add(-time.Nanosecond), loc)
}

// Late reports whether the source's data is older, at now, than its kind
// normally is.
func (s Source) Late(now time.Time) bool { return now.Sub(s.Through) > s.Lag }

// Scope is the spend a question is about: a provider, a format, or both
// ("" for any). A budget's or a view's other dimensions (service, team,
// model, account, tags) do not tell sources apart, and match them all.
type Scope struct {
	Provider, Source string
}

// ScopeOf is the Scope of a budget's scope.
func ScopeOf(sc store.BudgetScope) Scope { return Scope{Provider: sc.Provider, Source: sc.Source} }

// ScopeOfFilter is the Scope of a view's filter.
func ScopeOfFilter(f store.SpendFilter) Scope { return Scope{Provider: f.Provider, Source: f.Source} }

func (sc Scope) matches(s Source) bool {
	return (sc.Provider == "" || strings.EqualFold(sc.Provider, s.Provider)) && (sc.Source == "" || sc.Source == s.Source)
}

// Report is how fresh an org's sources are at a moment.
type Report struct {
	At    time.Time
	Loc   *time.Location
	Today time.Time // At's day in Loc
	// Sources are every source, the most recent data first.
	Sources []Source
	// Connections are the org's connections and how each is doing.
	Connections []Connection
}

// Load reads org's sources and connections and judges them at now.
func Load(ctx context.Context, st *store.Store, org store.Org, now time.Time) (Report, error) {
	ts, err := st.DataThrough(ctx, org.ID)
	if err != nil {
		return Report{}, err
	}
	cs, err := st.Connections(ctx, org.ID)
	if err != nil {
		return Report{}, err
	}
	return Build(org, now, ts, cs), nil
}

// Build judges org's sources (as st.DataThrough lists them) and connections
// at now. It reads nothing.
func Build(org store.Org, now time.Time, ts []store.SourceThrough, cs []store.Connection) Report {
	loc := org.Location()
	r := Report{At: now, Loc: loc, Today: budget.Day(now, loc)}
	names := map[int64]store.Connection{}
	for _, c := range cs {
		names[c.ID] = c
	}
	type key struct {
		source, provider string
		conn             int64
	}
	idx := map[key]int{}
	for _, t := range ts {
		k := key{t.Source, t.Provider, t.ConnectionID}
		i, ok := idx[k]
		if !ok {
			s := Source{Source: t.Source, Kind: KindOf(t.Source), Provider: t.Provider, ConnectionID: t.ConnectionID}
			s.Lag = s.Kind.Lag
			if c, ok := names[t.ConnectionID]; ok {
				s.Connection = c.Name
				s.Lag += SyncEvery
			} else if t.ConnectionID != 0 {
				s.Connection = "deleted"
				s.Lag += SyncEvery
			}
			i = len(r.Sources)
			idx[k] = i
			r.Sources = append(r.Sources, s)
		}
		s := &r.Sources[i]
		s.Accounts = append(s.Accounts, Account{ID: t.BillingAccount, Through: t.Through})
		if t.Through.After(s.Through) {
			s.Through = t.Through
		}
		if t.LastImport.After(s.LastImport) {
			s.LastImport = t.LastImport
		}
	}
	for i := range r.Sources {
		slices.SortStableFunc(r.Sources[i].Accounts, func(a, b Account) int { return b.Through.Compare(a.Through) })
	}
	slices.SortStableFunc(r.Sources, func(a, b Source) int {
		return cmp.Or(b.Through.Compare(a.Through), strings.Compare(a.Name(), b.Name()))
	})
	for _, c := range cs {
		var through time.Time
		var formats []string
		for _, s := range r.Sources {
			if s.ConnectionID == c.ID {
				formats = append(formats, s.Source)
				if s.Through.After(through) {
					through = s.Through
				}
			}
		}
		r.Connections = append(r.Connections, Judge(c, through, formats, now))
	}
	return r
}

// In is the sources sc covers, the most recent first.
func (r Report) In(sc Scope) []Source {
	var out []Source
	for _, s := range r.Sources {
		if sc.matches(s) {
			out = append(out, s)
		}
	}
	return out
}

// Late is the sources in sc whose data is late at r.At, the most recent
// first.
func (r Report) Late(sc Scope) []Source {
	var out []Source
	for _, s := range r.In(sc) {
		if s.Late(r.At) {
			out = append(out, s)
		}
	}
	return out
}

// Problems are the connections that fail or whose data stopped advancing.
func (r Report) Problems() []Connection {
	var out []Connection
	for _, c := range r.Connections {
		if c.Health == HealthFailing || c.Health == HealthStalled {
			out = append(out, c)
		}
	}
	return out
}

// DayNote says how complete a day's spend is in a scope.
type DayNote struct {
	Day time.Time
	// NoData is set when there are sources in the scope and none has any
	// data of Day yet: its spend is unknown, not zero.
	NoData bool
	// Missing are the sources in the scope that reached the week before
	// Day but have not delivered all of Day yet (with NoData: every
	// source in the scope, the most recent first).
	Missing []Source
}

// Day says how complete day's spend is in sc at r.At.
func (r Report) Day(sc Scope, day time.Time) DayNote {
	n := DayNote{Day: day}
	in := r.In(sc)
	if len(in) == 0 {
		return n
	}
	start, end := r.instant(day), r.instant(budget.AddDays(day, 1))
	n.NoData = true
	for _, s := range in {
		if s.Through.After(start) {
			n.NoData = false
		}
	}
	if n.NoData {
		n.Missing = in
		return n
	}
	for _, s := range in {
		if s.Through.Before(end) && r.active(s, day) {
			n.Missing = append(n.Missing, s)
		}
	}
	return n
}

// instant is the start of day in r's zone.
func (r Report) instant(day time.Time) time.Time {
	return time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, r.Loc)
}

// active reports whether s delivered data of the ForecastWindow days
// before day: a source that stopped long before is gone, not missing.
func (r Report) active(s Source, day time.Time) bool {
	return s.Through.After(r.instant(budget.AddDays(day, -budget.ForecastWindow)))
}

// Current is the basis of a status on r's today in sc: today's spend counts
// and is incomplete; see basis.
func (r Report) Current(sc Scope) budget.Basis { return r.basis(sc, budget.Today(r.Today)) }

// EndOf is the basis of a report of day in sc, read the morning after:
// see basis.
func (r Report) EndOf(sc Scope, day time.Time) budget.Basis { return r.basis(sc, budget.EndOf(day)) }

// basis is b, whose Day's spend counts, made to rest on what sc's sources
// have: its first incomplete day is no later than the first day an active
// source (one that delivered data of the week before) has not delivered
// all of; with no active source it is withheld ("No data since …"); late
// sources (past their expected lag, missing data b needs) are named.
func (r Report) basis(sc Scope, b budget.Basis) budget.Basis {
	in := r.In(sc)
	if len(in) == 0 {
		return b
	}
	complete := b.Complete
	var active int
	var late []string
	for _, s := range in {
		if s.Through.Before(r.instant(complete)) && s.Late(r.At) {
			late = append(late, s.Name()+" through "+s.LastDay(r.Loc).Format("Mon 2 Jan"))
		}
		if !r.active(s, complete) {
			continue
		}
		active++
		if d := budget.Day(s.Through, r.Loc); d.Before(complete) {
			complete = d
		}
	}
	if active == 0 {
		b.Withheld = "No data since " + in[0].LastDay(r.Loc).Format("Mon 2 Jan 2006")
		return b
	}
	b.Complete = complete
	if len(late) > 0 {
		b.Late = "Late data: " + strings.Join(late, ", ")
	}
	return b
}

// Fingerprint is a short text that changes when anything a cached page
// shows of r changes: which sources are late, how far each reaches, how
// each connection is doing.
func (r Report) Fingerprint() string {
	var b strings.Builder
	for _, s := range r.Sources {
		b.WriteString(s.Source + s.Provider + s.Through.UTC().Format(time.RFC3339))
		if s.Late(r.At) {
			b.WriteString("!")
		}
		b.WriteString(";")
	}
	for _, c := range r.Connections {
		b.WriteString(string(c.Health) + ";")
	}
	return b.String()
}

// View is a source as the spend API, the dashboard's JSON, the digest and
// the CLI show it.
type View struct {
	Name       string `json:"name"` // "AWS (via connection CUR prod)"
	Source     string `json:"source"`
	Provider   string `json:"provider"`
	Connection string `json:"connection,omitempty"`
	// DataThrough is how far its data reaches (RFC 3339): the newest end
	// of a charge period delivered.
	DataThrough time.Time `json:"data_through"`
	// LastDay is the last day it has data of, in the org's time zone.
	LastDay string `json:"last_day"`
	// ExpectedLagHours is how far behind its kind's data normally is;
	// Late is set when it is further.
	ExpectedLagHours float64       `json:"expected_lag_hours"`
	Late             bool          `json:"late"`
	Accounts         []AccountView `json:"accounts"`
}

// AccountView is how far one billing account of a source reaches.
type AccountView struct {
	ID          string    `json:"billing_account"`
	DataThrough time.Time `json:"data_through"`
}

// View is s as shown at r's moment.
func (r Report) View(s Source) View {
	v := View{Name: s.Name(), Source: s.Source, Provider: s.Provider, Connection: s.Connection, DataThrough: s.Through.UTC(),
		LastDay: s.LastDay(r.Loc).Format(time.DateOnly), ExpectedLagHours: s.Lag.Hours(), Late: s.Late(r.At),
		Accounts: make([]AccountView, 0, len(s.Accounts))}
	for _, a := range s.Accounts {
		v.Accounts = append(v.Accounts, AccountView{ID: a.ID, DataThrough: a.Through.UTC()})
	}
	return v
}

// Views are the sources in sc as shown, the most recent first.
func (r Report) Views(sc Scope) []View {
	out := []View{}
	for _, s := range r.In(sc) {
		out = append(out, r.View(s))
	}
	return out
}
