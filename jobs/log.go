package jobs

import (
	"context"
	"log/slog"
	"strings"
)

// riverHandler is the log handler River writes through. River logs each
// queue's "…: Producer job counts" at info every minute its counts moved,
// which on a server with periodic jobs is a line a minute per queue in an
// operator's info log; they are kept, at debug.
type riverHandler struct{ slog.Handler }

func (h riverHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && strings.HasSuffix(r.Message, ": Producer job counts") {
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
