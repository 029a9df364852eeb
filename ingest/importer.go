package ingest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
)

// Importer turns uploaded files into an org's charges: one transaction per
// file, all or nothing, the same file twice a no-op.
type Importer struct {
	store  *store.Store
	prices LLMPricer
	gpus   GPUMapper
	// AfterImport, when set, is called with every import that succeeds,
	// inside the import's own transaction, after its rows and its
	// "succeeded" are written: what it writes (a job enqueued with
	// jobs.Queue.Insert, say, to evaluate budgets) commits with the import
	// or not at all. An error fails the import. It is not called for a
	// failed import or a duplicate file. tx may be fenced to the org.
	AfterImport func(ctx context.Context, tx *store.Store, orgID, importID int64) error
	// RowQuota, when set, bounds the rows an org may import (a plan's
	// monthly quota). It is asked before the file is read (an org with
	// nothing left is refused at once), the file is stopped as soon as its
	// rows pass what is left, and it is asked again inside the import's
	// transaction, under a lock per org, so that two imports at once
	// cannot each fit what only one does. A refused file writes nothing,
	// not even a failed entry in the history. st may be fenced to the org.
	RowQuota func(ctx context.Context, st *store.Store, org store.Org) (Quota, error)
	// Timeout bounds one import's wall-clock time, from the first byte
	// read to its commit (DefaultImportTimeout from NewImporter; 0: no
	// bound beyond the caller's context). An import that runs out of time
	// fails, writing nothing, like one whose upload was cancelled.
	Timeout time.Duration
}

// DefaultImportTimeout is Importer.Timeout unless the operator sets
// another (IMPORT_TIMEOUT): a 512 MB CUR imports in a few minutes.
const DefaultImportTimeout = 30 * time.Minute

// errImportTimeout is the cause of an import's context when its Timeout
// ran out.
var errImportTimeout = errors.New("the import ran out of time")

// Quota is what an org may still import.
type Quota struct {
	Left int64 // rows; negative: no limit
	// Refuse is the error for a file of at least rows rows (0: not read
	// yet) that does not fit.
	Refuse func(rows int64) error
}

// quotaExceeded carries a Quota's refusal out of COPY and the transaction.
type quotaExceeded struct{ err error }

func (e *quotaExceeded) Error() string { return e.err.Error() }
func (e *quotaExceeded) Unwrap() error { return e.err }

// NewImporter returns an Importer writing to st, pricing token usage with
// prices and mapping instance types to GPUs with gpus.
func NewImporter(st *store.Store, prices LLMPricer, gpus GPUMapper) *Importer {
	return &Importer{store: st, prices: prices, gpus: gpus, Timeout: DefaultImportTimeout}
}

// With returns an Importer that works through st: the request's store,
// fenced to its org, so that an import holds one connection, not two.
func (im *Importer) With(st *store.Store) *Importer {
	c := *im
	c.store = st
	return &c
}

// ImportRequest says whose file it is and how to read it.
type ImportRequest struct {
	Org        store.Org
	FileName   string
	Source     Source   // "" detects the source from the header
	Mapping    *Mapping // for the generic source
	UploadedBy int64    // 0 for API tokens and the CLI
	Via        string   // web, api, cli
	// ConnectionID is the connection pulling the file (0: an upload).
	ConnectionID int64
	// Pricer, when set, prices token usage instead of the Importer's table:
	// the org's negotiated prices over the shipped ones.
	Pricer LLMPricer
	// Progress, when set, is called with the rows read so far, every
	// progressEvery rows, from the importing goroutine.
	Progress func(rows int64)
}

// progressEvery is how often ImportRequest.Progress hears of a long import.
const progressEvery = 10_000

// ImportResult is what an import did, in the shape POST /api/v1/imports and
// `burnrate import --json` print (docs/import-formats.md, "What an import reports").
type ImportResult struct {
	ID           int64             `json:"id"`
	FileName     string            `json:"file_name"`
	Source       Source            `json:"source"`
	Rows         int64             `json:"rows"`
	PeriodStart  *string           `json:"period_start"`
	PeriodEnd    *string           `json:"period_end"`
	ReplacedRows int64             `json:"replaced_rows"`
	SkippedRows  int64             `json:"skipped_rows"`
	MergedRows   int64             `json:"merged_rows"`
	ShortRows    int64             `json:"short_rows"` // records short of optional last columns, read as empty
	Duplicate    bool              `json:"duplicate"`
	ImportedAt   time.Time         `json:"imported_at"`
	Totals       map[string]string `json:"totals"`
	// CostBasis is the view of the bill the file states: "billed" or
	// "amortized" for an Azure export, "" for files carrying both.
	CostBasis string `json:"cost_basis"`
	// DataThrough is how far the file's data reaches: the newest end of a
	// charge period of at most a day it delivered (RFC 3339;
	// docs/data-model.md, "Freshness"). Null for a failed import.
	DataThrough *time.Time `json:"data_through"`
}

// ImportError is a failed import: nothing was written, and the failure is
// kept in the import history under ImportID.
type ImportError struct {
	ImportID int64
	FileName string
	Err      error
	// Preview says the file is in no known format and its header and first
	// rows are kept with the import (store.ImportPreview), to map from.
	Preview bool
}

func (e *ImportError) Error() string { return e.Err.Error() }
func (e *ImportError) Unwrap() error { return e.Err }

// HTTPStatus is 422: the file, not the server, is at fault; or the status
// of the cause when it has one (a plan's limit).
func (e *ImportError) HTTPStatus() int {
	var se interface{ HTTPStatus() int }
	if errors.As(e.Err, &se) {
		return se.HTTPStatus()
	}
	return http.StatusUnprocessableEntity
}

// Position is the line and column of the bad value, when there is one.
func (e *ImportError) Position() (int, string) {
	var pe *ParseError
	if errors.As(e.Err, &pe) {
		return pe.Line, pe.Column
	}
	return 0, ""
}

// dedupeOf says how a source's rows meet rows already imported.
func dedupeOf(src Source) store.Dedupe {
	switch src {
	case SourceLiteLLMSpend, SourceOpenRouter:
		return store.DedupeSkip // one row per request: a known id is the same request
	case SourceOCICost, SourceOCIFocus:
		return store.DedupeSkip // each report holds a few new hours: a known line item is the same line item
	case SourceOpenAIUsage, SourceOpenAICosts, SourceAnthropicUsage, SourceAnthropicCost, SourceLiteLLMDaily,
		SourceConsoleCost, SourceConsoleUsage:
		return store.DedupeReplace // usage buckets: a later export restates them
	}
	return store.DedupeNone // cloud exports: restated per billing period
}

// errDuplicate ends an import's transaction when the file turns out to be
// one the org imported before.
var errDuplicate = errors.New("duplicate file")

// Import reads file once, hashing it on the way, and writes its rows. A file
// already imported is rolled back at the end and returns the earlier import
// with Duplicate set (the hash is known only once the whole file is read:
// one pass over a large file is worth more than a fast answer for the rare
// duplicate). A bad file returns an *ImportError and writes nothing but the
// failed entry in the history.
//
// The whole import runs on one database connection, which its row names as
// its importer (store.CreateImport): if the process dies mid-file, and the
// connection with it, FailInterrupted (in any process) marks the import
// failed.
func (im *Importer) Import(ctx context.Context, req ImportRequest, file io.Reader) (ImportResult, error) {
	// The name is stored with the import and shown in its history, so it
	// must be text Postgres can hold. The web layer refuses such a name in
	// a query or a browser form; this catches every other way in (an API
	// upload's multipart file name, a file on disk for the CLI). It is
	// refused, not cleaned up: a name nobody typed would be no label at all,
	// and renaming the file is easy.
	if at := badText(req.FileName); at >= 0 {
		what := "not valid UTF-8"
		if req.FileName[at] == 0 {
			what = "contains a NUL byte"
		}
		return ImportResult{}, &ImportError{FileName: req.FileName,
			Err: fmt.Errorf("filename %s: %s; nothing was imported", strconv.Quote(req.FileName), what)}
	}
	// Shown as typed, without what would make it lie about itself: a
	// bidirectional override (invoice‮fdp.exe) or a line break.
	req.FileName = label.Clean(req.FileName)
	if req.Source != "" && !slices.Contains(Sources(), req.Source) {
		return ImportResult{}, &ImportError{FileName: req.FileName, Err: fmt.Errorf("%w %q: use one of %v", ErrUnknownSource, req.Source, Sources())}
	}
	if im.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, im.Timeout, errImportTimeout)
		defer cancel()
	}
	var res ImportResult
	err := im.store.Conn(ctx, func(st *store.Store) error {
		var err error
		res, err = im.With(st).importOn(ctx, req, file)
		return err
	})
	return res, err
}

// importOn is Import on the one connection im.store holds.
func (im *Importer) importOn(ctx context.Context, req ImportRequest, file io.Reader) (ImportResult, error) {
	quota, err := im.quotaBefore(ctx, req)
	if err != nil {
		return ImportResult{}, err
	}
	imp, err := im.store.CreateImport(ctx, store.NewImport{
		OrgID: req.Org.ID, FileName: req.FileName, Source: string(req.Source), UploadedBy: req.UploadedBy, Via: req.Via,
		ConnectionID: req.ConnectionID,
	})
	if err != nil {
		return ImportResult{}, err
	}
	// Deferred first, so it runs last: the claim goes once the row says
	// how the import ended. Should it fail, the row still names this
	// connection's backend, and a sweep fails the import once it is gone.
	defer func() { _ = im.store.EndImport(context.WithoutCancel(ctx), req.Org.ID, imp.ID) }()

	in, err := parquetInput(file)
	if err != nil {
		return im.fail(ctx, req, imp.ID, req.Source, fmt.Errorf("%s: read: %w", req.FileName, err))
	}
	defer in.done()
	rd, hash, err := im.open(ctx, req, in)
	defer hash.stop()
	if err != nil {
		if ctx.Err() != nil {
			err = im.stopped(ctx, req)
		}
		return im.fail(ctx, req, imp.ID, req.Source, err)
	}
	src := newChargeSource(ctx, rd, req.Org.Location())
	src.progress = req.Progress
	src.quota = quota
	defer src.stop()
	// The transaction's statements run on a context that does not end
	// with ctx: pgx would close the connection mid-statement, and with it
	// the means to roll back cleanly and record why the import stopped.
	// What ctx bounds is the work: reading and parsing the file, which
	// feeds the COPY and ends it, and write checks it between steps.
	err = im.store.InTx(context.WithoutCancel(ctx), func(tx *store.Store) error {
		return im.write(ctx, tx, req, imp.ID, src, hash)
	})
	return im.outcome(ctx, req, imp.ID, src, hash, err)
}

// quotaBefore returns what the org may still import, refusing at once an
// org with nothing left; no RowQuota means no limit.
func (im *Importer) quotaBefore(ctx context.Context, req ImportRequest) (Quota, error) {
	if im.RowQuota == nil {
		return Quota{Left: -1}, nil
	}
	quota, err := im.RowQuota(ctx, im.store, req.Org)
	if err != nil {
		return quota, err
	}
	if quota.Left == 0 {
		return quota, &ImportError{FileName: req.FileName, Err: quota.Refuse(0)}
	}
	return quota, nil
}

// fail records import importID as failed with cause, and returns the
// *ImportError for it. The failure is recorded even if the request was
// cancelled.
func (im *Importer) fail(ctx context.Context, req ImportRequest, importID int64, source Source, cause error) (ImportResult, error) {
	ctx = context.WithoutCancel(ctx)
	ierr := &ImportError{ImportID: importID, FileName: req.FileName, Err: cause}
	line, col := ierr.Position()
	if err := im.store.FailImport(ctx, req.Org.ID, importID, string(source), cause.Error(), line, col); err != nil {
		return ImportResult{}, errors.Join(cause, err)
	}
	// A file in no known format keeps its header and first rows, to set up
	// the column mapping from.
	var fe *FormatError
	if errors.As(cause, &fe) {
		raw, err := json.Marshal(fe.Preview)
		if err == nil {
			err = im.store.SetImportPreview(ctx, req.Org.ID, importID, raw)
		}
		if err != nil {
			return ImportResult{}, errors.Join(cause, err)
		}
		ierr.Preview = true
	}
	return ImportResult{}, ierr
}

// options are the parser's options for req.
func (im *Importer) options(req ImportRequest) Options {
	prices := im.prices
	if req.Pricer != nil {
		prices = req.Pricer
	}
	return Options{
		FileName:   req.FileName,
		Source:     req.Source,
		TeamTagKey: req.Org.TeamTagKey,
		Pricer:     prices,
		GPUs:       im.gpus,
		Mapping:    req.Mapping,
	}
}

// open returns the Reader of the uploaded file and the reader that hashes
// it as uploaded.
func (im *Importer) open(ctx context.Context, req ImportRequest, in input) (*Reader, fileHash, error) {
	var (
		hash fileHash
		rd   *Reader
		err  error
	)
	opts := im.options(req)
	if in.ra != nil {
		// Parquet is read at offsets, not in one pass: the hash reads the
		// file once more, in order, once its rows are written.
		hash = &hashingReader{r: io.NewSectionReader(in.ra, 0, in.size), h: sha256.New()}
		rd, err = OpenParquet(ctx, in.ra, in.size, opts)
	} else {
		hash = newHashAhead(in.rest)
		rd, err = Open(hash, opts)
	}
	if errors.Is(err, ErrEmpty) && hash.size() == 0 {
		err = fmt.Errorf("%s: %w: the upload has 0 bytes", req.FileName, ErrEmpty)
	}
	return rd, hash, err
}

// write is the import's transaction: the rows, the quota under its lock,
// the duplicate check (errDuplicate), the import's result, AfterImport.
// Its statements run whether ctx ends or not; its steps do not start once
// it has.
func (im *Importer) write(ctx context.Context, tx *store.Store, req ImportRequest, importID int64, src *chargeSource, hash fileHash) error {
	work := ctx
	ctx = context.WithoutCancel(ctx)
	wr, err := writeRows(ctx, tx, req, importID, src)
	if err != nil {
		return err
	}
	if work.Err() != nil {
		return context.Cause(work)
	}
	if err := im.quotaAfter(ctx, tx, req, src.rows); err != nil {
		return err
	}
	// Whatever the parser left unread (after a gzip stream, say) is still
	// part of the file the hash names.
	if _, err := io.Copy(io.Discard, ctxReader{work, hash}); err != nil {
		if work.Err() != nil {
			return err
		}
		return fmt.Errorf("%s: read: %w", req.FileName, err)
	}
	if _, err := tx.ImportBySHA256(ctx, req.Org.ID, hash.sum()); err == nil {
		return errDuplicate
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	err = tx.FinishImport(ctx, req.Org.ID, importID, store.ImportResult{
		Source: string(src.rd.Source()), SHA256: hash.sum(), SizeBytes: hash.size(),
		Rows: wr.Rows, ReplacedRows: wr.ReplacedRows, SkippedRows: wr.SkippedRows, MergedRows: wr.MergedRows,
		ShortRows: int64(src.rd.ShortRecords()), CostBasis: wr.CostBasis, PeriodStart: src.first, PeriodEnd: src.last, Totals: wr.Totals,
		Extents: src.extents.list(),
	})
	if errors.Is(err, store.ErrConflict) {
		return errDuplicate // the same file, imported concurrently, committed first
	}
	if err != nil {
		return err
	}
	if work.Err() != nil {
		return context.Cause(work)
	}
	if im.AfterImport != nil {
		if err := im.AfterImport(ctx, tx, req.Org.ID, importID); err != nil {
			return fmt.Errorf("after import %d: %w", importID, err)
		}
	}
	return nil
}

// writeRows writes src's rows in tx. A request id on two different rows is
// a *ParseError at the second; a file with no record after its header is
// ErrHeaderOnly, while a file whose records all carry nothing (an export of
// empty usage buckets, days without use) is a fine file of no rows.
func writeRows(ctx context.Context, tx *store.Store, req ImportRequest, importID int64, src *chargeSource) (store.WriteResult, error) {
	wr, err := tx.WriteCharges(ctx, req.Org.ID, importID, req.Org.Location(), dedupeOf(src.rd.Source()), src)
	// The reading goroutine is done with the Reader and the file before
	// either is looked at again.
	src.stop()
	var kc *store.KeyConflictError
	switch {
	case errors.As(err, &kc):
		return wr, &ParseError{File: req.FileName, Line: kc.Line, Err: &reason{
			fmt.Sprintf("the request id %q is also on line %d, with other values", kc.Key, kc.FirstLine), ErrRepeatedID},
			Msg: "a request has one row; remove the one that is wrong"}
	case err != nil:
		return wr, err
	case src.rows == 0 && src.rd.Records() == 0:
		return wr, fmt.Errorf("%s: %w", req.FileName, ErrHeaderOnly)
	}
	return wr, nil
}

// quotaAfter asks RowQuota again, under the org's quota lock, whether rows
// more fit: two imports at once cannot each fit what only one does.
func (im *Importer) quotaAfter(ctx context.Context, tx *store.Store, req ImportRequest, rows int64) error {
	if im.RowQuota == nil {
		return nil
	}
	if err := tx.LockImportQuota(ctx, req.Org.ID); err != nil {
		return err
	}
	q, err := im.RowQuota(ctx, tx, req.Org)
	if err != nil {
		return err
	}
	if q.Left >= 0 && rows > q.Left {
		return &quotaExceeded{q.Refuse(rows)}
	}
	return nil
}

// outcome turns how the import's transaction ended (err) into its result:
// the earlier import for a duplicate, nothing for a file the plan refuses,
// the failure recorded for a bad file or a cancelled upload, the import
// itself when it succeeded.
func (im *Importer) outcome(ctx context.Context, req ImportRequest, importID int64, src *chargeSource, hash fileHash, err error) (ImportResult, error) {
	if errors.Is(err, errDuplicate) {
		return im.duplicate(ctx, req, importID, hash.sum())
	}
	var qe *quotaExceeded
	if errors.As(err, &qe) || errors.As(src.err, &qe) {
		// Refused by the plan, not failed: no trace in the history.
		if derr := im.store.DeleteImport(context.WithoutCancel(ctx), req.Org.ID, importID); derr != nil {
			return ImportResult{}, derr
		}
		return ImportResult{}, &ImportError{FileName: req.FileName, Err: qe.err}
	}
	if err != nil {
		source := src.rd.Source()
		if ctx.Err() != nil {
			return im.fail(ctx, req, importID, source, im.stopped(ctx, req))
		}
		// A parse error surfaces from inside COPY wrapped by pgx; the
		// source keeps the original.
		if src.err != nil {
			err = src.err
		}
		var pe *ParseError
		if errors.As(err, &pe) || src.err != nil || errors.Is(err, ErrHeaderOnly) {
			return im.fail(ctx, req, importID, source, err)
		}
		_, _ = im.fail(ctx, req, importID, source, errors.New("the import failed on our side; nothing was imported, please try again"))
		return ImportResult{}, fmt.Errorf("import %s: %w", req.FileName, err)
	}
	done, err := im.store.Import(context.WithoutCancel(ctx), req.Org.ID, importID)
	if err != nil {
		return ImportResult{}, err
	}
	return ResultOf(done), nil
}

// stopped is why an import whose context ended stopped: its time ran out,
// or its upload was cancelled (the client went away).
func (im *Importer) stopped(ctx context.Context, req ImportRequest) error {
	if errors.Is(context.Cause(ctx), errImportTimeout) {
		return fmt.Errorf("%s: the import took longer than %s, the most one may take on this server; nothing was imported "+
			"(split the file into smaller ones, such as a month each)", req.FileName, im.Timeout)
	}
	return fmt.Errorf("%s: the upload was cancelled before it finished; nothing was imported", req.FileName)
}

// ctxReader reads r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// InterruptedMessage is the error an import is left with when its importer
// went away mid-file.
const InterruptedMessage = "interrupted: the server stopped; upload it again"

// FailInterrupted marks failed, with InterruptedMessage, every import whose
// importer is gone: the server crashed or was stopped mid-file, or its
// database connection ended. Nothing of such an import was written (its data
// transaction ended with the connection), but its row said "processing"
// forever. Imports still running, in this process or another, are left
// alone, so every process may call it at any time; serve does at start and
// then periodically. It returns the imports it failed.
func FailInterrupted(ctx context.Context, st *store.Store) ([]store.Import, error) {
	return st.FailInterruptedImports(ctx, InterruptedMessage)
}

// duplicate answers an upload of a file the org has: the earlier import,
// and no trace of this one.
func (im *Importer) duplicate(ctx context.Context, req ImportRequest, importID int64, sum []byte) (ImportResult, error) {
	if err := im.store.DeleteImport(context.WithoutCancel(ctx), req.Org.ID, importID); err != nil {
		return ImportResult{}, err
	}
	prev, err := im.store.ImportBySHA256(context.WithoutCancel(ctx), req.Org.ID, sum)
	if err != nil {
		return ImportResult{}, err
	}
	res := ResultOf(prev)
	res.Duplicate = true
	return res, nil
}

// input is an uploaded file ready to be read: a Parquet file at offsets
// (ra, size), anything else as a stream (rest).
type input struct {
	ra   io.ReaderAt
	size int64
	rest io.Reader
	done func()
}

// parquetInput looks at the first bytes of file. A Parquet file is used in
// place when it can be read at any offset (an upload spooled to disk, a
// file the CLI opened) and is otherwise copied to a temporary file first,
// since Parquet is read from its end; memory stays bounded either way.
func parquetInput(file io.Reader) (input, error) {
	in := input{rest: file, done: func() {}}
	if ra, ok := file.(io.ReaderAt); ok {
		sk, ok := file.(io.Seeker)
		if !ok || !IsParquet(ra) {
			return in, nil
		}
		size, err := sk.Seek(0, io.SeekEnd)
		if err != nil {
			return in, err
		}
		in.ra, in.size = ra, size
		return in, nil
	}
	br := bufio.NewReaderSize(file, 64<<10)
	in.rest = br
	magic, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		// Peek hands the reader's error over once and forgets it: said
		// here, or the next Read would see a clean (empty) end.
		return in, err
	}
	if string(magic) != parquetMagic {
		return in, nil
	}
	tmp, err := os.CreateTemp("", "burnrate-import-*.parquet")
	if err != nil {
		return in, err
	}
	in.done = func() { tmp.Close(); os.Remove(tmp.Name()) }
	size, err := io.Copy(tmp, br)
	if err != nil {
		in.done()
		in.done = func() {}
		return in, err
	}
	in.ra, in.size = tmp, size
	return in, nil
}

// hashingReader hashes and counts what is read through it: a Parquet
// file's bytes, read in order once its rows are written.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (hr *hashingReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.n += int64(n)
	return n, err
}

func (hr *hashingReader) sum() []byte { return hr.h.Sum(nil) }
func (hr *hashingReader) size() int64 { return hr.n }
func (hr *hashingReader) stop()       {}

// ResultOf is a stored import in the API's shape.
func ResultOf(i store.Import) ImportResult {
	res := ImportResult{
		ID: i.ID, FileName: i.FileName, Source: Source(i.Source), Rows: i.Rows, ReplacedRows: i.ReplacedRows,
		SkippedRows: i.SkippedRows, MergedRows: i.MergedRows, ShortRows: i.ShortRows, CostBasis: string(i.CostBasis),
		Totals: make(map[string]string, len(i.Totals)), ImportedAt: i.CreatedAt, DataThrough: i.DataThrough,
	}
	if i.PeriodStart != nil {
		s := i.PeriodStart.Format(time.DateOnly)
		res.PeriodStart = &s
	}
	if i.PeriodEnd != nil {
		s := i.PeriodEnd.Format(time.DateOnly)
		res.PeriodEnd = &s
	}
	for cur, v := range i.Totals {
		res.Totals[cur] = v.String()
	}
	return res
}

// HistoryEntry is a stored import as the history lists it
// (GET /api/v1/imports, burnrate imports list --json): its result, and
// whether it succeeded, failed (with why) or is still processing.
type HistoryEntry struct {
	ImportResult
	Status    string     `json:"status"`
	Error     string     `json:"error,omitempty"`
	RemovedAt *time.Time `json:"removed_at,omitempty"`
	RemovedBy string     `json:"removed_by,omitempty"` // the person's email, else "api" or "cli"
}

// HistoryLength is how many imports, newest first, the history shows.
const HistoryLength = 100

// HistoryEntryOf is a stored import in the history's shape.
func HistoryEntryOf(i store.Import) HistoryEntry {
	e := HistoryEntry{ImportResult: ResultOf(i), Status: i.Status, Error: i.Error, RemovedAt: i.RemovedAt, RemovedBy: i.RemoverEmail}
	if e.RemovedBy == "" {
		e.RemovedBy = i.RemovedVia
	}
	return e
}

// PriceTable adapts an LLM price table to the LLMPricer seam.
func PriceTable(t *pricing.LLMPriceTable) LLMPricer { return priceTable{t} }

type priceTable struct{ t *pricing.LLMPriceTable }

func (p priceTable) PriceUsage(model string, u pricing.TokenUsage) (decimal.Decimal, bool) {
	price, ok := p.t.Lookup(model)
	if !ok {
		return decimal.Decimal{}, false
	}
	return price.UsageCost(u), true
}

// MappingFrom is the org's saved column mapping as the generic parser takes it.
func MappingFrom(m store.ColumnMapping) *Mapping {
	return &Mapping{Date: m.Date, Cost: m.Cost, Currency: m.Currency, Service: m.Service, Account: m.Account,
		Provider: m.Provider, Tags: m.Tags, DateFormat: m.DateFormat, DefaultCurrency: m.DefaultCurrency,
		DecimalSeparator: m.DecimalSeparator}
}
