package freshness

import (
	"time"

	"github.com/burnrate/burnrate/store"
)

// Health is how a connection is doing.
type Health string

// The healths of a connection.
const (
	HealthOK      Health = "ok"      // its last run worked and its data is as recent as its kind's
	HealthNew     Health = "new"     // it has delivered nothing yet, and is not late doing so
	HealthFailing Health = "failing" // its last run failed
	HealthStalled Health = "stalled" // its runs work, but its data stopped advancing past its lag
	HealthPaused  Health = "paused"  // a person paused it
)

// Connection is a connection and how it is doing.
type Connection struct {
	ID     int64
	Name   string
	Kind   string
	Health Health
	// Error and Fix are the last run's error and what a person should do
	// about it, when failing.
	Error, Fix string
	// Since is when the problem began: the streak's first failed run, or
	// the moment its data became late.
	Since   time.Time
	Through time.Time // how far its data reaches; zero: nothing yet
	Lag     time.Duration
	LastRun *time.Time
	// Failures is how many runs in a row failed.
	Failures int
	// NeedsPerson is set when the failure will not go away by itself (a
	// refused key, a missing bucket), as opposed to a provider that is
	// busy or down, which is retried.
	NeedsPerson bool
}

// Judge says how c is doing at now, its data reaching through (zero when
// it has delivered nothing) in formats (what it has delivered).
func Judge(c store.Connection, through time.Time, formats []string, now time.Time) Connection {
	j := Connection{ID: c.ID, Name: c.Name, Kind: c.Kind, Through: through, Lag: ConnectionLag(c.Kind, formats),
		LastRun: c.LastRunAt, Failures: c.Failures}
	switch {
	case c.Paused:
		j.Health = HealthPaused
	case c.LastStatus == "failed":
		j.Health, j.Error, j.Fix = HealthFailing, c.LastError, c.LastFix
		if c.FailingSince != nil {
			j.Since = *c.FailingSince
		} else if c.LastRunAt != nil {
			j.Since = *c.LastRunAt
		}
		j.NeedsPerson = c.LastFix != "" && c.LastFix != FixWait
	case through.IsZero():
		// Nothing delivered: late once a lag has passed since it was made
		// (a backfill of a quiet account delivers empty buckets, which
		// still reach).
		j.Health = HealthNew
		if due := c.CreatedAt.Add(j.Lag); now.After(due) && c.LastRunAt != nil {
			j.Health, j.Since = HealthStalled, due
		}
	case now.Sub(through) > j.Lag:
		j.Health, j.Since = HealthStalled, through.Add(j.Lag)
	default:
		j.Health = HealthOK
	}
	return j
}

// FixWait is the fix of a failure that passes by itself: the provider was
// busy or down, and the connection tries again.
const FixWait = "Nothing to do: Burnrate tries again on its own."
