package jobs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestRiverHandlerDemotesRoutineLines: River's minute-by-minute producer
// counts and its scheduler's and cleaners' routine runs are debug lines,
// gone from an info log; its other info lines (the client's start, a
// rescue of jobs), and everything at debug, are as they were.
func TestRiverHandlerDemotesRoutineLines(t *testing.T) {
	t.Parallel()
	routine := []string{"producer: Producer job counts", "maintenance.JobScheduler: Ran successfully",
		"maintenance.JobCleaner: Ran successfully", "maintenance.QueueCleaner: Ran successfully"}
	kept := []string{"River client started", "maintenance.JobRescuer: Ran successfully"}
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		log := slog.New(riverHandler{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})}).With("component", "river")
		for _, msg := range append(routine, kept...) {
			log.Info(msg, "n", 1)
		}
		log.Debug("producer: Fetching jobs")
		out := buf.String()
		for _, msg := range kept {
			if !strings.Contains(out, `level=INFO msg="`+msg+`" component=river n=1`) {
				t.Errorf("%s log lacks %q at info:\n%s", level, msg, out)
			}
		}
		for _, msg := range routine {
			at := strings.Contains(out, `level=DEBUG msg="`+msg+`" component=river n=1`)
			if level == slog.LevelInfo && strings.Contains(out, msg) || level == slog.LevelDebug && !at {
				t.Errorf("%s log: %q present %v, at debug %v; want it at debug only:\n%s", level, msg, strings.Contains(out, msg), at, out)
			}
		}
		if (level == slog.LevelDebug) != strings.Contains(out, "Fetching jobs") {
			t.Errorf("%s log: debug lines are not as they were:\n%s", level, out)
		}
	}
}
