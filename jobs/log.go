package jobs

import (
	"context"
	"log/slog"
	"strings"
)

// riverHandler is the log handler River writes through. River logs some
// routine lines at info on a schedule: each queue's "…: Producer job
// counts" every minute they moved, and its maintenance services' "Ran
// successfully" each time they make scheduled jobs available (a savings
// refresh is due seconds after every import) or delete finished ones. On
// a server those are most of an operator's info log; they are kept, at
// debug. The job rescuer's stays at info: a rescued job means a process
// stopped in the middle of it.
type riverHandler struct{ slog.Handler }

// routineRiverLine reports whether msg is one of those lines.
func routineRiverLine(msg string) bool {
	switch msg {
	case "maintenance.JobScheduler: Ran successfully", "maintenance.JobCleaner: Ran successfully",
		"maintenance.QueueCleaner: Ran successfully":
		return true
	}
	return strings.HasSuffix(msg, ": Producer job counts")
}

func (h riverHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && routineRiverLine(r.Message) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h riverHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return riverHandler{h.Handler.WithAttrs(attrs)}
}

func (h riverHandler) WithGroup(name string) slog.Handler {
	return riverHandler{h.Handler.WithGroup(name)}
}
