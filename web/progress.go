package web

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// uploadProgress tracks how many rows running browser uploads have read,
// so the page can show processing progress while the upload's request is
// still being answered. It lives in this process: with several app
// instances, a poll that reaches another one shows no count, which the page
// handles as "still processing".
type uploadProgress struct {
	mu   sync.Mutex
	runs map[string]*progressRun
}

type progressRun struct {
	rows    atomic.Int64
	started time.Time
}

func newUploadProgress() *uploadProgress {
	return &uploadProgress{runs: map[string]*progressRun{}}
}

// start registers an upload under its org and the key the page chose, and
// returns the callback the importer reports to and a function to forget it.
func (p *uploadProgress) start(orgID int64, key string) (report func(int64), done func()) {
	if key == "" || len(key) > 64 {
		return nil, func() {}
	}
	k := strconv.FormatInt(orgID, 10) + ":" + key
	run := &progressRun{started: time.Now()}
	p.mu.Lock()
	p.runs[k] = run
	p.mu.Unlock()
	return func(rows int64) { run.rows.Store(rows) }, func() {
		p.mu.Lock()
		delete(p.runs, k)
		p.mu.Unlock()
	}
}

func (p *uploadProgress) rows(orgID int64, key string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	run, ok := p.runs[strconv.FormatInt(orgID, 10)+":"+key]
	if !ok {
		return 0, false
	}
	return run.rows.Load(), true
}

// handleImportProgress answers the upload page's polls with a line of text.
func (s *Server) handleImportProgress(c echo.Context) error {
	rows, ok := s.progress.rows(currentOrg(c).ID, c.QueryParam("key"))
	if !ok || rows == 0 {
		return c.String(http.StatusOK, "Processing… rows are being checked and imported")
	}
	return c.String(http.StatusOK, "Processing… "+strconv.FormatInt(rows, 10)+" rows read")
}
