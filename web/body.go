package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Request bodies are read in full before a request takes its database
// connection: a request holds its fenced connection (see fence) until it is
// answered, so a client trickling an upload a byte at a time would otherwise
// hold one of the pool's few connections for as long as it liked, and a
// handful of such clients would stop every org's requests. The body is read
// under a deadline that grows with the bytes received (guardBody), into
// memory or a temporary file (readBody), and the handler reads that copy.

const (
	// DefaultBodyReadGrace is Config.BodyReadGrace's default.
	DefaultBodyReadGrace = 20 * time.Second
	// DefaultBodyMinRate is Config.BodyMinRate's default: 8 KiB/s, slower
	// than any real uplink, and fast enough that a trickling client is cut
	// off within seconds of the grace period.
	DefaultBodyMinRate = 8 << 10
	// DefaultMaxImportsPerOrg is Config.MaxImportsPerOrg's default.
	DefaultMaxImportsPerOrg = 2

	// bodyMemoryBytes is the largest body kept in memory; larger ones are
	// spooled to a temporary file, so that many concurrent uploads cost
	// disk rather than memory.
	bodyMemoryBytes = 64 << 10
	// formBodyBytes caps the body of requests that are not uploads (forms,
	// JSON). Uploads have their own, larger caps in the route table.
	formBodyBytes = 1 << 20
	// importRetryAfter is the Retry-After sent with a refused import, in
	// seconds: an import of a large file takes about that long.
	importRetryAfter = 30
)

// errBodyTooSlow is what a guarded body's Read returns once the client has
// fallen behind the minimum rate.
var errBodyTooSlow = errors.New("request body arrived too slowly")

// bodyGuard paces a request body: by time start + grace + n/minRate, more
// than n bytes must have arrived. It enforces that with the connection's
// read deadline, moved forward as bytes arrive, so that a stalled client's
// Read fails rather than blocking its goroutine forever.
type bodyGuard struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	start   time.Time
	grace   time.Duration
	minRate int64

	read  int64
	armed bool // the connection takes read deadlines (a test's recorder does not)
	slow  bool
}

func (g *bodyGuard) deadline() time.Time {
	// In floating point: n/minRate in nanoseconds overflows int64 for
	// bodies of a few gigabytes.
	d := float64(g.grace) + float64(g.read)/float64(g.minRate)*float64(time.Second)
	return g.start.Add(time.Duration(min(d, math.MaxInt64/2)))
}

func (g *bodyGuard) Read(p []byte) (int, error) {
	if g.slow {
		return 0, errBodyTooSlow
	}
	n, err := g.body.Read(p)
	g.read += int64(n)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		g.slow = true
		return n, errBodyTooSlow
	case !g.armed:
	case err == io.EOF:
		// The whole body is in. Clear the deadline: once the body is
		// read, the server reads the connection in the background to
		// notice a client going away, and a deadline passing then would
		// cancel the request. (The server sets no ReadTimeout that this
		// would undo.)
		_ = g.rc.SetReadDeadline(time.Time{})
		g.armed = false
	case n > 0:
		_ = g.rc.SetReadDeadline(g.deadline())
	}
	return n, err
}

func (g *bodyGuard) Close() error { return g.body.Close() }

// guardBody paces the request's body (see bodyGuard) for whoever reads it:
// readBody, and before it the CSRF check, which reads forms. It arms the
// deadline at once, because the server itself may read an unread body after
// the handler returns (to reuse the connection), and that read must be
// bounded too.
func (s *Server) guardBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength == 0 {
			return next(c)
		}
		g := &bodyGuard{
			body:    req.Body,
			rc:      http.NewResponseController(c.Response()),
			start:   time.Now(),
			grace:   s.cfg.BodyReadGrace,
			minRate: s.cfg.BodyMinRate,
		}
		g.armed = g.rc.SetReadDeadline(g.deadline()) == nil
		req.Body = g
		err := next(c)
		if g.slow {
			c.Response().Header().Set(echo.HeaderConnection, "close")
		}
		return err
	}
}

// bodyWasTooSlow reports whether the request's body was cut off for
// arriving too slowly.
func bodyWasTooSlow(c echo.Context) bool {
	g, ok := c.Request().Body.(*bodyGuard)
	return ok && g.slow
}

func (s *Server) errBodyTooSlow() error {
	return echo.NewHTTPError(http.StatusRequestTimeout, fmt.Sprintf(
		"The request body arrived too slowly: after the first %s it must average at least %d KB a second. Nothing was done; check the connection and send it again.",
		s.cfg.BodyReadGrace, max(1, s.cfg.BodyMinRate>>10)))
}

// spooledBody is a request body read in full, in memory or in a temporary
// file. Handlers may seek it (it is an io.ReadSeeker).
type spooledBody struct {
	io.ReadSeeker
	size int64
	file *os.File // nil when in memory
}

// ReadAt reads the body at an offset, as a Parquet upload is read (from
// its footer first); it leaves the Read position alone.
func (b *spooledBody) ReadAt(p []byte, off int64) (int, error) {
	return b.ReadSeeker.(io.ReaderAt).ReadAt(p, off)
}

// Close does nothing: readBody removes the body once the request is done.
func (b *spooledBody) Close() error { return nil }

func (b *spooledBody) remove() {
	if b.file != nil {
		b.file.Close()
		os.Remove(b.file.Name())
	}
}

// bodyTooLargeError refuses a body over a route's cap.
type bodyTooLargeError struct{ limit int64 }

func (e bodyTooLargeError) Error() string {
	return fmt.Sprintf("The request is larger than the %d KB this page accepts.", e.limit>>10)
}

func (e bodyTooLargeError) HTTPStatus() int { return http.StatusRequestEntityTooLarge }

// readBody reads the request's body, up to limit bytes, before the rest of
// the chain runs; route it before fence, so that no database connection is
// held while a client sends. The handler then reads the copy: through
// Request().Body (an io.ReadSeeker) or the form methods as usual. A
// temporary file is removed when the request is done.
func (s *Server) readBody(limit int64) echo.MiddlewareFunc {
	tooLarge := func() error {
		if limit >= s.cfg.MaxUploadBytes {
			return errUploadTooLarge(s.cfg.MaxUploadBytes)
		}
		return bodyTooLargeError{limit}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength == 0 {
				req.Body = &spooledBody{ReadSeeker: bytes.NewReader(nil)}
				return next(c)
			}
			if req.ContentLength > limit {
				c.Response().Header().Set(echo.HeaderConnection, "close")
				return tooLarge()
			}
			body, err := spool(req.Body, limit, s.cfg.TempDir)
			var he *echo.HTTPError
			switch {
			case err == nil:
			case bodyWasTooSlow(c), errors.Is(err, errBodyTooSlow):
				return s.errBodyTooSlow()
			case errors.Is(err, errSpoolLimit):
				c.Response().Header().Set(echo.HeaderConnection, "close")
				return tooLarge()
			case errors.As(err, &he):
				return err // the body limit's 413
			case errors.Is(err, errSpoolFile):
				return err
			default:
				return echo.NewHTTPError(http.StatusBadRequest, "The request body was cut off before its end. Nothing was done; send it again.")
			}
			defer body.remove()
			req.Body, req.ContentLength = body, body.size
			defer func() {
				// The server removes a parsed form's files for the request
				// it made; remove them here too in case the chain parsed a
				// copy of it.
				if req.MultipartForm != nil {
					req.MultipartForm.RemoveAll()
				}
			}()
			return next(c)
		}
	}
}

var (
	errSpoolLimit = errors.New("spool: body over the limit")
	errSpoolFile  = errors.New("spool: temporary file")
)

// spool reads r to its end, up to limit bytes, into memory if it is small
// and into a temporary file in dir (os.TempDir() when empty) otherwise.
func spool(r io.Reader, limit int64, dir string) (*spooledBody, error) {
	r = io.LimitReader(r, limit+1)
	var mem bytes.Buffer
	n, err := io.CopyN(&mem, r, bodyMemoryBytes+1)
	if err == io.EOF {
		if n > limit {
			return nil, errSpoolLimit
		}
		return &spooledBody{ReadSeeker: bytes.NewReader(mem.Bytes()), size: n}, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "burnrate-body-*")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSpoolFile, err)
	}
	body := &spooledBody{ReadSeeker: f, file: f}
	if _, err := f.Write(mem.Bytes()); err != nil {
		body.remove()
		return nil, fmt.Errorf("%w: %w", errSpoolFile, err)
	}
	rest, err := io.Copy(f, r)
	if err != nil {
		body.remove()
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: %w", errSpoolFile, err)
		}
		return nil, err
	}
	body.size = n + rest
	if body.size > limit {
		body.remove()
		return nil, errSpoolLimit
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		body.remove()
		return nil, fmt.Errorf("%w: %w", errSpoolFile, err)
	}
	return body, nil
}

// importSlots counts the imports each org is running, to cap them: a few
// orgs importing huge files at once must leave connections, disk and CPU
// for everyone else.
//
// The count is per process. A Postgres advisory lock per slot would count
// across every serve process, but a session lock needs a connection held
// for the whole upload, which is what reading bodies first avoids; and what
// the cap protects (this process's pool, temporary disk and CPU) is per
// process anyway.
type importSlots struct {
	max     int
	mu      sync.Mutex
	running map[int64]int
}

func newImportSlots(max int) *importSlots {
	return &importSlots{max: max, running: map[int64]int{}}
}

// acquire takes a slot for org, or reports false when all are taken.
func (s *importSlots) acquire(org int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[org] >= s.max {
		return false
	}
	s.running[org]++
	return true
}

func (s *importSlots) release(org int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[org]--; s.running[org] <= 0 {
		delete(s.running, org)
	}
}

// limitImports refuses an import while the org already runs as many as
// Config.MaxImportsPerOrg. It comes before readBody, so that a refused
// upload is refused before it is sent, and the slot is held while the body
// arrives too.
func (s *Server) limitImports(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		org := currentOrg(c)
		if !s.imports.acquire(org.ID) {
			c.Response().Header().Set("Retry-After", strconv.Itoa(importRetryAfter))
			return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(
				"%s already has %d imports running; try again when one finishes.", org.Name, s.imports.max))
		}
		defer s.imports.release(org.ID)
		return next(c)
	}
}
