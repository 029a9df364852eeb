package ingest

import (
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/shopspring/decimal"
)

// Parquet files (AWS Data Exports deliver CUR 2.0 and FOCUS as Parquet by
// default) are read row group by row group, a few rows at a time, and each
// row becomes a record of text cells under the file's top-level column
// names: from there on the same parsers, checks and import path as CSV
// apply. See docs/import-formats.md, "Files".

// parquetMagic starts (and ends) every Parquet file.
const parquetMagic = "PAR1"

// parquetBatch is how many rows are decoded at a time.
const parquetBatch = 256

// IsParquet reports whether the bytes ra holds start with the Parquet magic
// number.
func IsParquet(ra io.ReaderAt) bool {
	var magic [4]byte
	n, _ := ra.ReadAt(magic[:], 0)
	return n == 4 && string(magic[:]) == parquetMagic
}

// OpenParquet is Open for a Parquet file of size bytes: it reads the
// footer, detects the source from the column names unless opts chooses
// one, and returns a Reader positioned at the first row. A file that is
// not Parquet, is cut short or corrupt, or whose metadata passes the
// limits of parquetmeta.go fails with ErrCorruptParquet; checking its
// pages stops when ctx ends, with its cause.
func OpenParquet(ctx context.Context, ra io.ReaderAt, size int64, opts Options) (*Reader, error) {
	file := opts.FileName
	if opts.TeamTagKey == "" {
		opts.TeamTagKey = defaultTeamTagKey
	}
	forced, err := forcedSource(&opts)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fileErr(file, ErrEmpty, "0 bytes")
	}
	pq, err := openParquetRecords(ctx, ra, size, file)
	if err != nil {
		return nil, err
	}
	hdr := pq.header
	for i := range hdr {
		if at := badText(hdr[i]); at >= 0 {
			return nil, headerTextError(file, i, hdr[i], at)
		}
	}
	h := newHeader(hdr)
	d := forced
	if d == nil {
		if d = detect(h); d == nil {
			return nil, unknownFormat(file, clip(hdr), previewRecords(func() ([]string, error) {
				rec, err := pq.next()
				return slices.Clone(rec), err
			}))
		}
	}
	rd := &Reader{source: d.source, file: file, header: hdr, pq: pq, width: len(hdr), named: len(hdr)}
	if rd.parser, err = d.build(h, &opts); err != nil {
		return nil, prefixFile(file, err)
	}
	rd.required = h.firstRequired
	first, err := pq.next()
	if err == io.EOF {
		return nil, fileErr(file, ErrHeaderOnly, "the Parquet file has columns but no rows")
	}
	if err != nil {
		return nil, err
	}
	rd.first = first
	rd.line = int(pq.total)
	rd.tags = make(map[string]string, 8)
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rd.ctx = rowCtx{file: file, hdr: hdr, tags: rd.tags, team: opts.TeamTagKey, date: boundsAt(now())}
	rd.team = opts.TeamTagKey
	return rd, nil
}

// pqLeaf says what one leaf column of the file contributes to a record.
type pqLeaf struct {
	cell   int // index of the header cell it fills
	role   int // pqScalar, pqMapKey or pqMapValue
	maxDef int
	typ    parquet.Type
	scale  int32 // DECIMAL scale
	kind   int   // pqText, pqInt, pqDecimal, pqDate, pqTimestamp, pqOther
	unit   time.Duration
}

const (
	pqScalar = iota
	pqMapKey
	pqMapValue
	pqIgnored
)

const (
	pqPlain = iota
	pqDecimal
	pqDate
	pqTimestamp
)

// parquetRecords turns the rows of a Parquet file into records.
type parquetRecords struct {
	file   string
	header []string
	leaves []pqLeaf // by leaf column index
	isMap  []bool   // by header cell: the cell is a map written as JSON
	groups []parquet.RowGroup

	g     int // current row group
	rows  parquet.Rows
	buf   []parquet.Row
	n, i  int   // rows in buf, next row in buf
	row   int   // 0-based index in its row group of the row last returned
	total int64 // rows returned so far

	rec  []string
	keys [][]string // per cell, a map's keys and values of the current row
	vals [][]string

	// The row's text cells are copied into one buffer and made one string,
	// sliced per cell: one allocation a row rather than one a cell.
	arena []byte
	spans []pqSpan
}

// pqSpan is a text cell's bytes in parquetRecords.arena.
type pqSpan struct{ cell, start, end int }

func openParquetRecords(ctx context.Context, ra io.ReaderAt, size int64, file string) (_ *parquetRecords, err error) {
	corrupt := func(detail string) error {
		return &ParseError{File: file, Err: ErrCorruptParquet, Msg: detail}
	}
	// The footer and every page header are checked under budgets before
	// the library reads either (parquetmeta.go).
	footer, err := readParquetFooter(ra, size)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	if err := checkPages(ctx, ra, footer); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, corrupt(err.Error())
	}
	// The library trusts the file's metadata; a hostile footer can make it
	// panic rather than fail. That is a corrupt file, not a crash.
	defer func() {
		if p := recover(); p != nil {
			err = corrupt(fmt.Sprint("unreadable metadata: ", p))
		}
	}()
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
	if err != nil {
		return nil, corrupt(err.Error())
	}
	pq := &parquetRecords{file: file, groups: f.RowGroups(), buf: make([]parquet.Row, parquetBatch)}
	nleaves := len(f.Schema().Columns())
	pq.leaves = make([]pqLeaf, nleaves)
	for i := range pq.leaves {
		pq.leaves[i].role = pqIgnored
	}
	for _, top := range f.Root().Columns() {
		cell := len(pq.header)
		pq.header = append(pq.header, strings.TrimSpace(top.Name()))
		pq.isMap = append(pq.isMap, false)
		if top.Leaf() {
			pq.leaves[top.Index()] = leafOf(top, cell, pqScalar)
			continue
		}
		// A map<string, …> (CUR 2.0's resource_tags, cost_category,
		// product) becomes the JSON object the CSV delivery writes. Other
		// nested columns are left empty: no format reads them.
		if k, v, ok := mapLeaves(top); ok {
			pq.isMap[cell] = true
			pq.leaves[k.Index()] = leafOf(k, cell, pqMapKey)
			pq.leaves[v.Index()] = leafOf(v, cell, pqMapValue)
		}
	}
	pq.rec = make([]string, len(pq.header))
	pq.keys = make([][]string, len(pq.header))
	pq.vals = make([][]string, len(pq.header))
	return pq, nil
}

// mapLeaves returns the key and value leaves of a MAP column
// (map → key_value → key, value).
func mapLeaves(c *parquet.Column) (key, value *parquet.Column, ok bool) {
	kv := c.Columns()
	if len(kv) != 1 || kv[0].Leaf() {
		return nil, nil, false
	}
	inner := kv[0].Columns()
	if len(inner) != 2 || !inner[0].Leaf() || !inner[1].Leaf() {
		return nil, nil, false
	}
	return inner[0], inner[1], true
}

func leafOf(c *parquet.Column, cell, role int) pqLeaf {
	l := pqLeaf{cell: cell, role: role, maxDef: c.MaxDefinitionLevel(), typ: c.Type()}
	if lt := c.Type().LogicalType(); lt != nil {
		switch t := lt.Value.(type) {
		case *format.DecimalType:
			l.kind, l.scale = pqDecimal, t.Scale
		case *format.DateType:
			l.kind = pqDate
		case *format.TimestampType:
			l.kind = pqTimestamp
			if t.Unit.Value != nil {
				l.unit = t.Unit.Value.Duration()
			}
		}
	}
	if l.kind == pqPlain {
		if ct := c.Type().ConvertedType(); ct != nil {
			switch *ct {
			case 9: // TIMESTAMP_MILLIS
				l.kind, l.unit = pqTimestamp, time.Millisecond
			case 10: // TIMESTAMP_MICROS
				l.kind, l.unit = pqTimestamp, time.Microsecond
			case 6: // DATE
				l.kind = pqDate
			}
		}
	}
	if l.kind == pqTimestamp && l.unit == 0 {
		l.unit = time.Millisecond
	}
	return l
}

// next returns the next row as a record (reused by the next call), or
// io.EOF after the last.
func (pq *parquetRecords) next() (rec []string, err error) {
	for pq.i >= pq.n {
		if err := pq.fill(); err != nil {
			return nil, err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = pq.errAt(fmt.Sprint(p))
		}
	}()
	row := pq.buf[pq.i]
	pq.i++
	pq.row++
	pq.total++
	for i := range pq.rec {
		pq.rec[i] = ""
		pq.keys[i] = pq.keys[i][:0]
		pq.vals[i] = pq.vals[i][:0]
	}
	pq.arena, pq.spans = pq.arena[:0], pq.spans[:0]
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= len(pq.leaves) {
			continue
		}
		l := &pq.leaves[c]
		if l.role == pqIgnored {
			continue
		}
		present := !v.IsNull() && v.DefinitionLevel() == l.maxDef
		if present && l.role == pqScalar && l.kind == pqPlain && (v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray) {
			start := len(pq.arena)
			pq.arena = append(pq.arena, v.ByteArray()...)
			pq.spans = append(pq.spans, pqSpan{l.cell, start, len(pq.arena)})
			continue
		}
		s := ""
		switch {
		case present:
			s = l.text(v)
		case l.role == pqMapValue && v.DefinitionLevel() == l.maxDef-1:
			// an entry whose value is null
		case l.role != pqScalar:
			continue // an empty or null map
		}
		switch l.role {
		case pqScalar:
			pq.rec[l.cell] = s
		case pqMapKey:
			pq.keys[l.cell] = append(pq.keys[l.cell], s)
		case pqMapValue:
			pq.vals[l.cell] = append(pq.vals[l.cell], s)
		}
	}
	if len(pq.spans) > 0 {
		all := string(pq.arena)
		for _, sp := range pq.spans {
			pq.rec[sp.cell] = all[sp.start:sp.end]
		}
	}
	for i, isMap := range pq.isMap {
		if isMap && len(pq.keys[i]) > 0 {
			pq.rec[i] = jsonObject(pq.keys[i], pq.vals[i])
		}
	}
	return pq.rec, nil
}

// fill reads the next batch of rows, moving to the next row group when
// this one is done.
func (pq *parquetRecords) fill() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = pq.errAt(fmt.Sprint(p))
		}
	}()
	if pq.rows == nil {
		if pq.g >= len(pq.groups) {
			return io.EOF
		}
		pq.rows = pq.groups[pq.g].Rows()
		pq.row = 0
	}
	n, err := pq.rows.ReadRows(pq.buf)
	pq.n, pq.i = n, 0
	if n > 0 {
		return nil // an error with rows is returned again by the next read
	}
	if err != nil && !errors.Is(err, io.EOF) {
		pq.row++ // the row that could not be read
		return pq.errAt(err.Error())
	}
	_ = pq.rows.Close()
	pq.rows = nil
	pq.g++
	return nil
}

// errAt reports corrupt data at the current row.
func (pq *parquetRecords) errAt(detail string) error {
	return &ParseError{File: pq.file, RowGroup: pq.g + 1, Row: max(pq.row, 1), Err: ErrCorruptParquet, Msg: detail}
}

// close releases the row group being read.
func (pq *parquetRecords) close() {
	if pq.rows != nil {
		_ = pq.rows.Close()
		pq.rows = nil
	}
}

// text writes a value as an export's CSV would.
func (l *pqLeaf) text(v parquet.Value) string {
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32:
		switch l.kind {
		case pqDate:
			return time.Unix(int64(v.Int32())*86400, 0).UTC().Format(time.DateOnly)
		case pqDecimal:
			return decimal.New(int64(v.Int32()), -l.scale).String()
		}
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		switch l.kind {
		case pqTimestamp:
			return time.Unix(0, 0).Add(time.Duration(v.Int64()) * l.unit).UTC().Format(time.RFC3339Nano)
		case pqDecimal:
			return decimal.New(v.Int64(), -l.scale).String()
		}
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Int96:
		// Spark's and Athena's legacy timestamps: nanoseconds of the day,
		// then the Julian day.
		b := v.Bytes()
		if len(b) != 12 {
			return ""
		}
		nanos := int64(binary.LittleEndian.Uint64(b[:8]))
		day := int64(binary.LittleEndian.Uint32(b[8:]))
		return time.Unix((day-2440588)*86400, nanos).UTC().Format(time.RFC3339Nano)
	case parquet.Float:
		// The shortest text that reads back as the same float: what the
		// exporter meant, without binary noise.
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		if l.kind == pqDecimal {
			return decimal.NewFromBigInt(twosComplement(v.ByteArray()), -l.scale).String()
		}
		return string(v.ByteArray())
	}
	return v.String()
}

// twosComplement reads a big-endian two's complement integer (a DECIMAL
// stored as bytes).
func twosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return n
}

// jsonObject writes keys and values as a JSON object.
func jsonObject(keys, vals []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		v := ""
		if i < len(vals) {
			v = vals[i]
		}
		vb, _ := json.Marshal(v)
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String()
}

// ParquetCSV writes the Parquet file ra (size bytes) to w as the CSV the
// importer would read from it: the top-level column names, then each row's
// cells as text, as Open would see them. A version of an export split into
// several Parquet parts is imported as one file this way (package
// connect), so that it replaces its billing period once. It stops when
// ctx ends, with its cause.
func ParquetCSV(ctx context.Context, ra io.ReaderAt, size int64, file string, w io.Writer) error {
	pq, err := openParquetRecords(ctx, ra, size, file)
	if err != nil {
		return err
	}
	defer pq.close()
	cw := csv.NewWriter(w)
	if err := cw.Write(pq.header); err != nil {
		return err
	}
	for {
		if pq.total%parquetBatch == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		rec, err := pq.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
