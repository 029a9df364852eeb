package web

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// progressWriteTimeout bounds each progress write. Progress is a courtesy:
// when the pool is busy the page shows "still processing" for a moment
// rather than the import waiting for a connection it does not need.
const progressWriteTimeout = 250 * time.Millisecond

// startUploadProgress records how many rows a browser upload has read, in
// the database, so that the page's polls are answered whichever app
// instance they reach (docs/operations.md, "Several serve processes"). It returns
// the callback the importer reports to and a function to call when the
// upload has ended. The writes go through the unfenced pool, not the
// request's connection: that one is inside the import's transaction, whose
// rows nobody else can see until it commits.
func (s *Server) startUploadProgress(orgID int64, key string) (report func(int64), done func()) {
	if key == "" || len(key) > 64 {
		return nil, func() {}
	}
	write := func(op string, fn func(ctx context.Context) error) {
		ctx, cancel := context.WithTimeout(context.Background(), progressWriteTimeout)
		defer cancel()
		if err := fn(ctx); err != nil {
			s.log.Debug("upload progress not recorded", slog.String("op", op), slog.Any("error", err))
		}
	}
	write("start", func(ctx context.Context) error { return s.store.SetUploadProgress(ctx, orgID, key, 0) })
	return func(rows int64) {
			write("report", func(ctx context.Context) error { return s.store.SetUploadProgress(ctx, orgID, key, rows) })
		}, func() {
			write("done", func(ctx context.Context) error { return s.store.ClearUploadProgress(ctx, orgID, key) })
		}
}

// handleImportProgress answers the upload page's polls with a line of text.
func (s *Server) handleImportProgress(c echo.Context) error {
	rows, ok, err := s.db(c).UploadProgress(c.Request().Context(), currentOrg(c).ID, c.QueryParam("key"))
	if err != nil {
		return err
	}
	if !ok || rows == 0 {
		return c.String(http.StatusOK, "Processing… rows are being checked and imported")
	}
	return c.String(http.StatusOK, "Processing… "+strconv.FormatInt(rows, 10)+" rows read")
}
