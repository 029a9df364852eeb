package jobs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestRiverHandlerDemotesProducerCounts: River's minute-by-minute producer
// counts are debug lines, gone from an info log; its other info lines, and
// everything at debug, are as they were.
func TestRiverHandlerDemotesProducerCounts(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		log := slog.New(riverHandler{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})}).With("component", "river")
		log.Info("producer: Producer job counts", "queue", "default")
		log.Info("River client started")
		log.Debug("producer: Fetching jobs")
		out := buf.String()
		counts := strings.Contains(out, "Producer job counts")
		if level == slog.LevelInfo && (counts || !strings.Contains(out, "level=INFO msg=\"River client started\"")) {
			t.Errorf("info log:\n%s\nwant the client's start and no producer counts", out)
		}
		if level == slog.LevelDebug && (!strings.Contains(out, "level=DEBUG msg=\"producer: Producer job counts\" component=river queue=default") ||
			!strings.Contains(out, "Fetching jobs")) {
			t.Errorf("debug log:\n%s\nwant the producer counts at debug, with their attributes", out)
		}
	}
}
