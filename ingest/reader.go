package ingest

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/store"
)

// parser turns one record into a row. parse returns errSkip for records
// that carry no charge (e.g. empty usage buckets).
type parser interface {
	parse(c *rowCtx, row *Row) error
}

var errSkip = errors.New("skip row")

// Every record must have one field per header name: a record with more or
// fewer is a value with an unquoted comma, a line cut short or a missing
// comma, and reading it by position would put values under the wrong
// columns. Two formats write records of another length on purpose, and
// their parsers say so through these interfaces.

// shortRecords is implemented by parsers whose format writes some records
// shorter than the header (OpenAI's usage export writes an empty bucket as
// its time columns alone).
type shortRecords interface {
	// shortOK reports whether a record of n fields is one of those.
	shortOK(n int) bool
}

// headerSurplus is implemented by parsers whose format may carry header
// names past the end of every record.
type headerSurplus interface {
	// surplusOK reports whether the header's names beyond the records'
	// width, names, may be columns the file has no values for.
	surplusOK(names []string) bool
}

// detector recognises a source from its header.
type detector struct {
	source Source
	// what names the format and why a header is not it, in plain words,
	// for the unknown-format message: "an AWS CUR" + "no
	// lineItem/UnblendedCost column".
	what, lacks string
	match       func(h *header) bool
	build       func(h *header, o *Options) (parser, error)
}

// detectors are tried in order; signatures do not overlap on real exports.
var detectors = []detector{
	{SourceAWSCUR, "an AWS CUR", "no lineItem/UnblendedCost column", func(h *header) bool {
		return h.has("lineItem/UnblendedCost")
	}, newAWSCUR},
	{SourceAWSCUR2, "an AWS CUR 2.0 export", "no line_item_unblended_cost column", func(h *header) bool {
		return h.has("line_item_unblended_cost")
	}, newAWSCUR2},
	{SourceGCPBilling, "a Google Cloud billing export", "it needs cost, usage_start_time and service.description", func(h *header) bool {
		return h.has("cost") && h.has("usage_start_time") &&
			h.has("service.description", "sku.description", "service.id", "service_description", "sku_description", "service_id")
	}, newGCP},
	{SourceAzureCost, "an Azure cost export", "no CostInBillingCurrency, PreTaxCost, or Cost with MeterCategory", func(h *header) bool {
		return h.has("CostInBillingCurrency", "PreTaxCost") || (h.has("Cost") && h.has("MeterCategory", "MeterName"))
	}, newAzure},
	{SourceOCICost, "an Oracle Cloud cost report", "no cost/myCost and lineItem/intervalUsageStart columns", func(h *header) bool {
		return h.has("cost/myCost") && h.has("lineItem/intervalUsageStart")
	}, newOCI},
	{SourceOCIFocus, "an Oracle Cloud FOCUS report", "no BilledCost, ChargePeriodStart and oci_ReferenceNumber columns", func(h *header) bool {
		return h.has("BilledCost") && h.has("ChargePeriodStart") && h.has("oci_ReferenceNumber")
	}, newOCIFocus},
	{SourceFOCUS, "a FOCUS file", "no BilledCost and ChargePeriodStart columns", func(h *header) bool {
		return h.has("BilledCost") && h.has("ChargePeriodStart")
	}, newFOCUS},
	{SourceOpenAIUsage, "an OpenAI usage export", "no num_model_requests, or start_time with input_tokens and output_tokens", func(h *header) bool {
		return h.has("num_model_requests") || (h.has("start_time") && h.has("input_tokens") && h.has("output_tokens"))
	}, newOpenAIUsage},
	{SourceOpenAICosts, "an OpenAI costs export", "no line_item with amount_value", func(h *header) bool {
		return h.has("line_item") && h.has("amount_value", "amount.value", "amount")
	}, newOpenAICosts},
	{SourceConsoleCost, "a Claude Console cost download", "no usage_date_utc with cost_usd", func(h *header) bool {
		return h.has("usage_date_utc") && h.has("cost_usd")
	}, newConsoleCost},
	{SourceConsoleUsage, "a Claude Console usage download", "no usage_date_utc with usage_output_tokens", func(h *header) bool {
		return h.has("usage_date_utc") && h.has("usage_output_tokens")
	}, newConsoleUsage},
	{SourceAnthropicUsage, "an Anthropic usage report", "no uncached_input_tokens column", func(h *header) bool {
		return h.has("uncached_input_tokens")
	}, newAnthropicUsage},
	{SourceAnthropicCost, "an Anthropic cost report", "no amount with cost_type", func(h *header) bool {
		return h.has("amount") && h.has("cost_type")
	}, newAnthropicCost},
	{SourceLiteLLMSpend, "LiteLLM spend logs", "no request_id with spend", func(h *header) bool {
		return h.has("request_id") && h.has("spend")
	}, newLiteLLMSpend},
	{SourceLiteLLMDaily, "a LiteLLM daily spend table", "no date, spend and api_requests columns", func(h *header) bool {
		return h.has("date") && h.has("spend") && h.has("api_requests")
	}, newLiteLLMDaily},
	{SourceOpenRouter, "an OpenRouter activity export", "no generation_id with cost_total", func(h *header) bool {
		return h.has("generation_id") && h.has("cost_total")
	}, newOpenRouter},
}

func detect(h *header) *detector {
	for i := range detectors {
		if detectors[i].match(h) {
			return &detectors[i]
		}
	}
	return nil
}

// unknownFormat says, in plain words, which formats a header is not and
// why, and carries the header and the first rows (Preview) so that the
// column mapping can be set up from them.
func unknownFormat(file string, hdr []string, rows [][]string) error {
	var b strings.Builder
	if file != "" {
		b.WriteString(file + ": ")
	}
	b.WriteString(ErrUnknownFormat.Error())
	first := hdr[:min(len(hdr), 4)]
	quoted := make([]string, len(first))
	for i, f := range first {
		quoted[i] = strconv.Quote(snippet(f, 0))
	}
	fmt.Fprintf(&b, " (starts %s", strings.Join(quoted, ", "))
	if len(hdr) > len(first) {
		b.WriteString(", …")
	}
	b.WriteString("). It is not ")
	for i, d := range detectors {
		switch {
		case i == len(detectors)-1:
			b.WriteString(", and not ")
		case i > 0:
			b.WriteString(", not ")
		}
		fmt.Fprintf(&b, "%s (%s)", d.what, d.lacks)
	}
	b.WriteString(". If it is one of these, choose its format; otherwise map its columns once (the generic format)")
	return &FormatError{msg: b.String(), Preview: Preview{Header: hdr, Rows: rows}}
}

// FormatError is a file in no known format. Its Preview is what the column
// mapping page shows to pick the columns from.
type FormatError struct {
	msg     string
	Preview Preview
}

func (e *FormatError) Error() string { return e.msg }
func (e *FormatError) Unwrap() error { return ErrUnknownFormat }

// Preview is a file's header and first rows, cut to a size a page can show
// and a database row can keep.
type Preview struct {
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// Preview bounds: rows kept, columns kept, and the longest cell.
const (
	previewRows  = 5
	previewCols  = 200
	previewChars = 80
)

// clip bounds one record for a Preview.
func clip(rec []string) []string {
	out := make([]string, 0, min(len(rec), previewCols))
	for _, c := range rec[:min(len(rec), previewCols)] {
		if len(c) > previewChars {
			c = snippet(c[:previewChars], 0) + "…"
		}
		if badText(c) >= 0 {
			c = "" // text Postgres cannot store stays out of the preview
		}
		out = append(out, c)
	}
	return out
}

// previewRecords reads up to previewRows more records for a Preview; a
// record it cannot read ends the preview, not the error being reported.
func previewRecords(next func() ([]string, error)) [][]string {
	var rows [][]string
	for len(rows) < previewRows {
		rec, err := next()
		if err != nil {
			break
		}
		if len(rec) == 1 && rec[0] == "" {
			continue
		}
		rows = append(rows, clip(rec))
	}
	return rows
}

// Reader streams normalised rows from one file. It is not safe for
// concurrent use.
type Reader struct {
	source Source
	file   string
	header []string
	csv    *csvReader
	lim    *limitReader
	pq     *parquetRecords // instead of csv and lim, for a Parquet file
	parser parser
	ctx    rowCtx
	names  canonicalNames
	tags   map[string]string
	team   string
	first  []string // first data record, read by Open
	line   int
	err    error // sticky

	// width is the number of fields every record must have: the header's,
	// or fewer when the first record showed that the header has surplus
	// names (headerSurplus).
	width   int
	records int // records checked so far
	// named is the header's width without the unnamed columns at its end
	// (a trailing comma); required is the first column the parser needs
	// at or past each width (h.firstRequired), for short records.
	named    int
	required func(from int) int
	// short counts the records that stopped before the header's end,
	// missing only optional columns, read as empty (ShortRecords);
	// shortNow says the record being parsed is one.
	short    int
	shortNow int
}

// Open reads the header of r (gzip-compressed or plain CSV, UTF-8 with or
// without BOM), detects the source unless opts.Source or opts.Mapping
// chooses one, and returns a Reader positioned at the first data row.
//
// It fails with ErrEmpty for a file with no header, ErrHeaderOnly for a
// header without rows, ErrUnknownFormat when no source matches, ErrUnknownSource
// for a bad opts.Source, ErrMissingColumn when the chosen source lacks a
// required column, and ErrTruncatedGzip/ErrCorruptGzip for broken archives.
func Open(r io.Reader, opts Options) (*Reader, error) {
	file := opts.FileName
	if opts.TeamTagKey == "" {
		opts.TeamTagKey = defaultTeamTagKey
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = 8 << 20
	}
	// Resolve a forced source before reading anything.
	forced, err := forcedSource(&opts)
	if err != nil {
		return nil, err
	}
	cr, lim, err := openCSV(r, file, opts.MaxRecordBytes)
	if err != nil {
		return nil, err
	}
	hdr, err := readHeader(cr, file)
	if err != nil {
		return nil, err
	}
	h := newHeader(hdr)

	d := forced
	if d == nil {
		if d = detect(h); d == nil {
			return nil, unknownFormat(file, clip(hdr), previewRecords(func() ([]string, error) {
				lim.reset()
				return cr.Read()
			}))
		}
	}
	rd := &Reader{source: d.source, file: file, header: hdr, csv: cr, lim: lim, width: len(hdr), named: namedWidth(hdr)}
	if rd.parser, err = d.build(h, &opts); err != nil {
		return nil, prefixFile(file, err)
	}
	rd.required = h.firstRequired
	if err := rd.readFirst(); err != nil {
		return nil, err
	}
	rd.tags = make(map[string]string, 8)
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rd.ctx = rowCtx{file: file, hdr: hdr, tags: rd.tags, team: opts.TeamTagKey, date: boundsAt(now())}
	rd.team = opts.TeamTagKey
	return rd, nil
}

// genericDetector and gcpBigQueryDetector build the parsers of sources no
// header is detected as: opts.Source (or, for generic, opts.Mapping) has
// to choose them.
var (
	genericDetector     = detector{source: SourceGeneric, build: newGeneric}
	gcpBigQueryDetector = detector{source: SourceGCPBigQuery, build: newGCPBigQuery}
)

// forcedSource returns the detector opts.Source or opts.Mapping chooses, or
// nil when the header is to decide. A mapping without a source means the
// generic source, and opts.Source says so from then on.
func forcedSource(opts *Options) (*detector, error) {
	switch {
	case opts.Source == SourceGeneric || (opts.Source == "" && opts.Mapping != nil):
		opts.Source = SourceGeneric
		return &genericDetector, nil
	case opts.Source == "":
		return nil, nil
	case opts.Source == SourceGCPBigQuery:
		return &gcpBigQueryDetector, nil
	}
	for i := range detectors {
		if detectors[i].source == opts.Source {
			return &detectors[i], nil
		}
	}
	names := make([]string, 0, len(detectors)+1)
	for _, s := range Sources() {
		names = append(names, string(s))
	}
	return nil, fmt.Errorf("%w %q: choose one of %s", ErrUnknownSource, opts.Source, strings.Join(names, ", "))
}

// openCSV returns a CSV reader over r (decompressed when r is gzip, past a
// UTF-8 byte-order mark, refusing other Unicode encodings) and the
// limitReader that bounds the bytes one record may take.
func openCSV(r io.Reader, file string, maxRecordBytes int) (*csvReader, *limitReader, error) {
	const bufSize = 64 << 10
	src, err := decompressed(bufio.NewReaderSize(r, bufSize), file)
	if err != nil {
		return nil, nil, err
	}
	// The limit sits on the decompressed stream; encoding/csv reads the
	// bufio.Reader above it directly (no second buffer of its own).
	lim := &limitReader{r: src, limit: max(maxRecordBytes, 2*bufSize)}
	bufd := bufio.NewReaderSize(lim, bufSize)
	if err := stripBOM(bufd); err != nil {
		return nil, nil, fileErr(file, err, "")
	}
	// What a spreadsheet leaves in a file it saves (sheet.go).
	if crOnly(bufd) {
		bufd = bufio.NewReaderSize(crReader{bufd}, bufSize)
	}
	sepLine, err := skipSepLine(bufd)
	if err != nil {
		return nil, nil, fileErr(file, err, "")
	}
	// A Parquet file is read from its end (the footer) first, so it cannot
	// be read as a stream; the Importer spools one to a file. Inside gzip
	// it is not what any exporter writes.
	if magic, _ := bufd.Peek(4); string(magic) == parquetMagic {
		return nil, nil, fileErr(file, ErrCorruptParquet, "a Parquet file has to be read from a file, not a stream (and not inside gzip)")
	}
	// The Reader checks each record's width itself (Reader.check): it must
	// allow the two formats that write other widths on purpose, and say
	// which line is wrong and by how much.
	cr := newCSVReader(bufd)
	if sepLine {
		cr.numLine = 1 // lines are counted as the file has them
	}
	return cr, lim, nil
}

// decompressed returns br itself, or a gzip reader over it when it starts
// with the gzip magic number. An empty file is ErrEmpty.
func decompressed(br *bufio.Reader, file string) (io.Reader, error) {
	magic, err := br.Peek(2)
	if err != nil && len(magic) == 0 {
		if err == io.EOF {
			return nil, fileErr(file, ErrEmpty, "0 bytes")
		}
		return nil, fileErr(file, err, "")
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fileErr(file, gzipError(err), "")
		}
		return &gzipReader{r: zr}, nil
	}
	return br, nil
}

// readHeader reads the header's names, trimmed, refusing a blank line and
// a name with text Postgres could not store (see text.go).
func readHeader(cr *csvReader, file string) ([]string, error) {
	hdr, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fileErr(file, ErrEmpty, "no header line")
		}
		return nil, csvError(file, err, 0)
	}
	hdr = slices.Clone(hdr) // the record buffer is reused
	if len(hdr) == 1 && strings.TrimSpace(hdr[0]) == "" {
		return nil, fileErr(file, ErrEmpty, "no header line")
	}
	for i := range hdr {
		if at := badText(hdr[i]); at >= 0 {
			return nil, headerTextError(file, i, hdr[i], at)
		}
		hdr[i] = strings.TrimSpace(hdr[i])
	}
	return hdr, nil
}

// readFirst reads the first data record, which Next returns first, so that
// Open fails on a file that has a header and no rows.
func (r *Reader) readFirst() error {
	r.lim.reset()
	first, err := r.csv.Read()
	if err != nil {
		if err == io.EOF {
			return fileErr(r.file, ErrHeaderOnly, "")
		}
		return csvError(r.file, err, 2)
	}
	r.first = first
	r.line, _ = r.csv.FieldPos(0)
	return nil
}

// Records returns how many records after the header were read so far,
// including those that carry no charge (an empty usage bucket).
func (r *Reader) Records() int { return r.records }

// ShortRecords returns how many records read so far stopped before the
// header's last column, missing only columns the format does without,
// which were read as empty (a tool that drops a row's trailing empty
// cells writes them).
func (r *Reader) ShortRecords() int { return r.short }

// namedWidth is the number of header columns up to the last one with a
// name: a header ended by a trailing comma names nothing after it.
func namedWidth(hdr []string) int {
	n := len(hdr)
	for n > 1 && hdr[n-1] == "" {
		n--
	}
	return n
}

// basisParser is implemented by parsers of formats that state one cost
// basis per file, known once the file is read (Azure: actual or amortized).
type basisParser interface {
	costBasis() store.CostBasis
}

// CostBasis returns the cost basis the file's rows state, once Next has
// returned io.EOF: store.CostBoth (every row carries billed and effective
// cost) unless the format exports one view per file.
func (r *Reader) CostBasis() store.CostBasis {
	if bp, ok := r.parser.(basisParser); ok {
		return bp.costBasis()
	}
	return store.CostBoth
}

// Source returns the detected or forced source.
func (r *Reader) Source() Source { return r.source }

// Header returns the header fields (trimmed, BOM removed).
func (r *Reader) Header() []string { return r.header }

// Line returns the physical line number where the last record returned by
// Next started (the header is line 1).
func (r *Reader) Line() int { return r.line }

// Next fills row with the next charge and returns nil, io.EOF after the last
// one, or an error (a *ParseError for bad values or CSV syntax). After an
// error other than io.EOF the Reader is unusable and keeps returning it.
func (r *Reader) Next(row *Row) error {
	if r.err != nil {
		return r.err
	}
	for {
		rec := r.first
		if rec != nil {
			r.first = nil
		} else if r.pq != nil {
			var err error
			if rec, err = r.pq.next(); err != nil {
				if err == io.EOF {
					r.pq.close()
				}
				r.err = err
				return err
			}
			r.line = int(r.pq.total)
		} else {
			r.lim.reset()
			var err error
			rec, err = r.csv.Read()
			if err != nil {
				if err != io.EOF {
					err = csvError(r.file, err, r.line+1)
				}
				r.err = err
				return err
			}
			r.line, _ = r.csv.FieldPos(0)
		}
		if len(rec) == 1 && rec[0] == "" {
			continue // a line of just whitespace-free nothing, e.g. "\r"
		}
		if err := r.check(rec); err != nil {
			r.err = r.place(err)
			return r.err
		}
		r.ctx.rec = rec
		r.ctx.line = r.line
		r.ctx.sheet.symbols = r.ctx.sheet.symbols[:0]
		clear(r.tags)
		*row = Row{Source: r.source}
		err := r.parser.parse(&r.ctx, row)
		if err == errSkip {
			continue
		}
		if err == nil {
			err = r.ctx.checkSymbols(row)
		}
		if err != nil {
			r.err = r.place(r.shortHint(err, len(rec)))
			return r.err
		}
		if err := r.checkDates(row); err != nil {
			r.err = r.place(err)
			return r.err
		}
		r.finish(row)
		return nil
	}
}

// useTags makes m the map the next rows' tags are written into (and
// Row.Tags), in place of the Reader's own: rows read ahead each keep theirs.
func (r *Reader) useTags(m map[string]string) {
	r.tags, r.ctx.tags = m, m
}

// place puts a Parquet row's error at its row group and row: the parsers
// place errors at r.line, which for Parquet counts rows, not lines.
func (r *Reader) place(err error) error {
	var pe *ParseError
	if r.pq == nil || !errors.As(err, &pe) || pe.Line == 0 {
		return err
	}
	pe.Line, pe.RowGroup, pe.Row = 0, r.pq.g+1, r.pq.row
	return err
}

// check refuses a record that has the wrong number of fields or a cell
// that Postgres could not store (see text.go), before any parser reads it.
func (r *Reader) check(rec []string) error {
	r.shortNow = 0
	if len(rec) != r.width {
		if err := r.checkWidth(len(rec)); err != nil {
			return err
		}
	}
	r.records++
	// One pass over the record's bytes rather than two scans a cell: two
	// scans would be an eighth of the parse time on a 130-column CUR. Only a
	// record that fails is looked at cell by cell, to name the cell.
	if r.csv != nil {
		if badText(r.csv.Text()) < 0 {
			return nil
		}
	} else if text, ok := recordText(rec); ok && badText(text) < 0 && !splitRune(rec) {
		return nil
	}
	for i, cell := range rec {
		if at := badText(cell); at >= 0 {
			line := r.line
			if r.csv != nil {
				line, _ = r.csv.FieldPos(i) // the cell's own line, in a multi-line record
			}
			return cellTextError(r.file, line, r.columnLabel(i), cell, at)
		}
	}
	return nil
}

// checkWidth decides on a record of n fields when n is not r.width.
func (r *Reader) checkWidth(n int) error {
	hw := len(r.header)
	if s, ok := r.parser.(shortRecords); ok && s.shortOK(n) {
		return nil
	}
	if r.records == 0 && n < hw {
		if s, ok := r.parser.(headerSurplus); ok && s.surplusOK(r.header[n:]) {
			r.width = n
			return nil
		}
	}
	hint := "check for a line cut short or a missing comma"
	if n < r.width && n > 0 {
		// A tool that drops a row's trailing empty cells writes it short:
		// the columns it lacks are read as empty when the format can do
		// without them all, and counted. Unnamed columns are no columns.
		if n >= r.named {
			return nil
		}
		col := r.required(n)
		if col < 0 || col >= r.width {
			r.short++
			r.shortNow = n
			return nil
		}
		hint = fmt.Sprintf("it stops before column %s, which %s needs; %s", r.columnLabel(col), r.source, hint)
	}
	what := fmt.Sprintf("%d fields, the header has %d", n, hw)
	if r.width < hw {
		what = fmt.Sprintf("%d fields, the rows above it have %d (the header has %d)", n, r.width, hw)
	}
	if n > r.width {
		hint = "check for a value with a comma in it that is not in quotes"
	}
	return &ParseError{File: r.file, Line: r.line, Err: &reason{what, ErrFieldCount}, Msg: hint}
}

// shortHint adds to the error of a record that was short of the header
// (read with its last columns empty) that it was: a lost comma shifts
// every value after it, which is then refused for what it is not.
func (r *Reader) shortHint(err error, n int) error {
	short := r.shortNow == n && n > 0
	var pe *ParseError
	if !short || !errors.As(err, &pe) {
		return err
	}
	hint := fmt.Sprintf("the line has %d fields and the header %d: if a comma is missing, the values after it are under the wrong columns", n, r.width)
	if pe.Msg == "" {
		pe.Msg = hint
	} else {
		pe.Msg += "; " + hint
	}
	return err
}

// columnLabel names column i for an error: its header name, or its
// position when the header leaves it unnamed.
func (r *Reader) columnLabel(i int) string {
	if i < len(r.header) && r.header[i] != "" {
		return r.header[i]
	}
	return fmt.Sprintf("field %d", i+1)
}

// checkDates holds every row to the date bounds, whichever way its parser
// read the dates: parsers check each date cell as they read it (naming the
// column), and this catches any date that reached the row another way.
func (r *Reader) checkDates(row *Row) error {
	for _, d := range []struct {
		name string
		t    time.Time
	}{{"charge period start", row.ChargePeriodStart}, {"billing period start", row.BillingPeriodStart}} {
		if d.t.IsZero() {
			continue
		}
		if err := r.ctx.date.check(d.t); err != nil {
			return &ParseError{File: r.file, Line: r.line,
				Err: &reason{"the " + d.name + " " + d.t.Format(time.DateOnly) + " " + err.Error(), ErrDateRange}, Msg: r.ctx.date.span()}
		}
	}
	return nil
}

// finish gives the row its canonical names, attaches the tags map and
// resolves the team.
func (r *Reader) finish(row *Row) {
	r.names.apply(row)
	if len(r.tags) == 0 {
		row.Tags = nil
	} else {
		row.Tags = r.tags
	}
	if row.Team != "" {
		return
	}
	if v, ok := r.tags[r.team]; ok {
		row.Team = v
		return
	}
	for k, v := range r.tags {
		if strings.EqualFold(k, r.team) && v != "" {
			row.Team = v
			return
		}
	}
	// Cost categories (AWS) rank below resource tags.
	for k, v := range r.tags {
		if name, ok := strings.CutPrefix(k, costCategoryPrefix); ok && strings.EqualFold(name, r.team) && v != "" {
			row.Team = v
			return
		}
	}
}

const costCategoryPrefix = "costCategory/"

func fileErr(file string, err error, detail string) error {
	if file == "" && detail == "" {
		return err
	}
	pe := &ParseError{File: file, Err: err, Msg: detail}
	return pe
}

func prefixFile(file string, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		if pe.File == "" {
			pe.File = file
		}
		return pe
	}
	return &ParseError{File: file, Err: err, Msg: ""}
}

// csvError turns encoding/csv and decompression errors into *ParseError.
func csvError(file string, err error, line int) error {
	var ce *csv.ParseError
	if errors.As(err, &ce) {
		pe := &ParseError{File: file, Line: ce.Line, Char: ce.Column, Err: ErrSyntax}
		switch {
		case errors.Is(ce.Err, csv.ErrQuote):
			if ce.StartLine != ce.Line {
				pe.Msg = fmt.Sprintf("unbalanced quotes: the quoted field starting on line %d is not closed properly", ce.StartLine)
			} else {
				pe.Msg = `unbalanced quotes: a quoted field has a stray or missing " (write "" for a quote inside a quoted field)`
			}
		case errors.Is(ce.Err, csv.ErrBareQuote):
			pe.Msg = `stray " in an unquoted field (quote the field and write "" for the quote)`
		default:
			pe.Msg = ce.Err.Error()
		}
		// A quoted field running to the end of the file is reported at EOF;
		// point at where it starts instead.
		if ce.StartLine != ce.Line && errors.Is(ce.Err, csv.ErrQuote) {
			pe.Line = ce.StartLine
			pe.Char = 0
		}
		return pe
	}
	var ge *gzipErr
	if errors.As(err, &ge) {
		return &ParseError{File: file, Line: line, Err: ge.kind, Msg: ge.detail()}
	}
	if errors.Is(err, ErrRecordTooLarge) {
		return &ParseError{File: file, Line: line, Err: ErrRecordTooLarge,
			Msg: "a single record is larger than the limit; probably an unbalanced quote starting here"}
	}
	return &ParseError{File: file, Line: line, Err: err}
}

// stripBOM drops a UTF-8 byte-order mark and rejects the other Unicode
// encodings by theirs, saying which it found.
func stripBOM(br *bufio.Reader) error {
	b, _ := br.Peek(4)
	var found string
	switch {
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		_, _ = br.Discard(3)
		return nil
	case bytes.HasPrefix(b, []byte{0xff, 0xfe, 0, 0}):
		found = "UTF-32 (little-endian)"
	case bytes.HasPrefix(b, []byte{0, 0, 0xfe, 0xff}):
		found = "UTF-32 (big-endian)"
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		found = "UTF-16 (little-endian)"
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		found = "UTF-16 (big-endian)"
	default:
		return nil
	}
	return fmt.Errorf("%w: it starts with the byte-order mark of %s; save it as UTF-8 (in Excel: CSV UTF-8)", ErrNotUTF8, found)
}

// gzipReader tags decompression errors so they can be told apart from CSV errors.
type gzipReader struct{ r *gzip.Reader }

func (g *gzipReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = gzipError(err)
	}
	return n, err
}

type gzipErr struct {
	kind  error
	cause error
}

func (e *gzipErr) Error() string { return e.kind.Error() + ": " + e.cause.Error() }
func (e *gzipErr) Unwrap() error { return e.kind }
func (e *gzipErr) detail() string {
	if e.kind == ErrTruncatedGzip {
		return "the file ends early; upload it again or check the download"
	}
	return e.cause.Error()
}

func gzipError(err error) error {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &gzipErr{kind: ErrTruncatedGzip, cause: err}
	case errors.As(err, &ce), errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return &gzipErr{kind: ErrCorruptGzip, cause: err}
	}
	return err
}

// limitReader fails once more than limit bytes are read since the last
// reset, bounding the memory one CSV record can take.
type limitReader struct {
	r     io.Reader
	n     int
	limit int
}

func (l *limitReader) reset() { l.n = 0 }

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, ErrRecordTooLarge
	}
	n, err := l.r.Read(p)
	l.n += n
	return n, err
}
