package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// withFooter returns body (which starts with the magic number and holds
// the pages) followed by md as the footer, its length and the magic.
func withFooter(t testing.TB, body []byte, md *format.FileMetaData) []byte {
	t.Helper()
	footer, err := thrift.Marshal(&thrift.CompactProtocol{}, md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(body), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, parquetMagic...)
}

// footerOf returns a real file's pages (everything before its footer) and
// its decoded footer.
func footerOf(t testing.TB, file []byte) ([]byte, *format.FileMetaData) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(file[len(file)-8:])
	md := *f.Metadata()
	return file[:len(file)-8-int(n)], &md
}

// deepSchemaParquet is a file whose schema nests depth groups, one in the
// other, around a single column: the footer is a few bytes per level.
func deepSchemaParquet(t testing.TB, depth int) []byte {
	t.Helper()
	schema := make([]format.SchemaElement, 0, depth+1)
	for i := range depth {
		schema = append(schema, format.SchemaElement{Name: "g", NumChildren: thrift.New(int32(1))})
		if i > 0 {
			schema[i].RepetitionType = thrift.New(format.Optional)
		}
	}
	schema = append(schema, format.SchemaElement{Name: "BilledCost", Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Optional)})
	path := []string{"BilledCost"}
	md := &format.FileMetaData{Version: 1, Schema: schema, NumRows: 1, RowGroups: []format.RowGroup{{
		NumRows: 1,
		Columns: []format.ColumnChunk{{MetaData: format.ColumnMetaData{
			Type: format.ByteArray, PathInSchema: path, Codec: format.Uncompressed, NumValues: 1,
			DataPageOffset: 4,
		}}},
	}}}
	return withFooter(t, []byte(parquetMagic), md)
}

// allocated returns the bytes allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParquetDeepSchemaRefused: a 1.6 MB file whose schema nests 200,000
// groups deep (the library's schema costs grow with the square of the
// depth: it took the server down), and one of 9,000 (within the budget of
// elements), are refused from their footers, having allocated little more
// than the footer. Not parallel: it measures the process's allocations.
func TestParquetDeepSchemaRefused(t *testing.T) {
	for _, tc := range []struct {
		depth int
		want  string
	}{
		{200_000, "deep.parquet: corrupt Parquet data: the schema has 200001 elements; at most 10000 are read"},
		{9_000, "deep.parquet: corrupt Parquet data: its schema nests groups more than 32 deep"},
	} {
		hostile := deepSchemaParquet(t, tc.depth)
		var err error
		n := allocated(func() {
			_, err = OpenParquet(context.Background(), bytes.NewReader(hostile), int64(len(hostile)), Options{FileName: "deep.parquet"})
		})
		if err == nil || !errors.Is(err, ErrCorruptParquet) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%d deep: %v", tc.depth, err)
		}
		if limit := uint64(4*len(hostile) + 1<<20); n > limit {
			t.Errorf("%d deep (%d bytes): refusing it allocated %d bytes, more than %d", tc.depth, len(hostile), n, limit)
		}
	}
	// A schema 32 deep is read: the limit is where it says.
	ok := deepSchemaParquet(t, 32)
	if _, err := readParquetFooter(bytes.NewReader(ok), int64(len(ok))); err != nil {
		t.Errorf("32 deep: %v", err)
	}
}

// TestParquetHostileFooters: every budget of the footer holds, and each
// refusal names what was too much.
func TestParquetHostileFooters(t *testing.T) {
	t.Parallel()
	good := writeCUR2Parquet(t, cur2Sample(300), 100)
	body, md := footerOf(t, good)

	wide := *md
	wide.Schema = append([]format.SchemaElement{{Name: "schema", NumChildren: thrift.New(int32(maxParquetSchema))}}, make([]format.SchemaElement, maxParquetSchema)...)
	for i := 1; i < len(wide.Schema); i++ {
		wide.Schema[i] = format.SchemaElement{Name: "c", Type: thrift.New(format.Int64)}
	}

	manyGroups := *md
	manyGroups.RowGroups = make([]format.RowGroup, maxParquetChunks/len(md.RowGroups[0].Columns)+1)
	for i := range manyGroups.RowGroups {
		manyGroups.RowGroups[i] = md.RowGroups[0]
	}

	overlap := *md
	overlap.RowGroups = append([]format.RowGroup(nil), md.RowGroups...)
	overlap.RowGroups[1].Columns = append([]format.ColumnChunk(nil), md.RowGroups[1].Columns...)
	overlap.RowGroups[1].Columns[2] = md.RowGroups[0].Columns[2] // read twice

	backwards := *md
	backwards.RowGroups = []format.RowGroup{md.RowGroups[1], md.RowGroups[0], md.RowGroups[2]}

	short := *md
	short.RowGroups = append([]format.RowGroup(nil), md.RowGroups...)
	short.RowGroups[0].Columns = md.RowGroups[0].Columns[:3]

	childless := *md
	childless.Schema = append([]format.SchemaElement(nil), md.Schema...)
	childless.Schema[0].NumChildren = thrift.New(int32(1 << 30))

	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"wide", withFooter(t, body, &wide), "the schema has 10001 elements; at most 10000 are read"},
		{"many row groups", withFooter(t, body, &manyGroups), "more than 100000 column chunks"},
		{"overlapping chunks", withFooter(t, body, &overlap), `row group 2, column "line_item_usage_account_id": its pages overlap another column's or come before them`},
		{"row groups out of order", withFooter(t, body, &backwards), "row group 2, column \"bill_payer_account_id\": its pages overlap"},
		{"missing chunks", withFooter(t, body, &short), "row group 1 has 3 column chunks for 18 columns"},
		{"children past the end", withFooter(t, body, &childless), "schema element 1 claims 1073741824 children"},
		{"list length past the end", listBomb(t, body), "a list claims 2147483647 items"},
		{"nested structs", nestedBomb(t, body, 100_000), "values nest more than 16 deep"},
		{"trailing bytes", trailing(t, body, md), "3 bytes follow the metadata"},
	} {
		_, err := OpenParquet(context.Background(), bytes.NewReader(tc.file), int64(len(tc.file)), Options{FileName: "x.parquet"})
		if err == nil || !errors.Is(err, ErrCorruptParquet) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// The untouched footer, re-encoded, still reads.
	again := withFooter(t, body, md)
	if _, err := OpenParquet(context.Background(), bytes.NewReader(again), int64(len(again)), Options{FileName: "x.parquet"}); err != nil {
		t.Fatalf("re-encoded footer: %v", err)
	}
}

// listBomb is a footer whose schema list claims 2^31-1 elements (the
// library allocates them all before reading the first).
func listBomb(t testing.TB, body []byte) []byte {
	footer := []byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00, 0x00}
	out := append(bytes.Clone(body), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, parquetMagic...)
}

// nestedBomb is a footer of one unknown field holding structs nested n
// deep (decoded by recursion, a goroutine's stack grows with n).
func nestedBomb(t testing.TB, body []byte, n int) []byte {
	footer := bytes.Repeat([]byte{0xfc}, n) // field +15, a struct
	footer = append(footer, bytes.Repeat([]byte{0}, n+1)...)
	out := append(bytes.Clone(body), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, parquetMagic...)
}

// trailing is md with three bytes after it, within the footer's length.
func trailing(t testing.TB, body []byte, md *format.FileMetaData) []byte {
	footer, err := thrift.Marshal(&thrift.CompactProtocol{}, md)
	if err != nil {
		t.Fatal(err)
	}
	footer = append(footer, 1, 2, 3)
	out := append(bytes.Clone(body), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, parquetMagic...)
}

// TestParquetOverlappingChunksRefused: chunks that overlap are refused
// outright, before a page is walked.
func TestParquetOverlappingChunksRefused(t *testing.T) {
	t.Parallel()
	good := writeCUR2Parquet(t, cur2Sample(2000), 2000)
	body, md := footerOf(t, good)
	rg := md.RowGroups[0]
	md.RowGroups = make([]format.RowGroup, 2000)
	for i := range md.RowGroups {
		md.RowGroups[i] = rg
	}
	md.NumRows = rg.NumRows * int64(len(md.RowGroups))
	hostile := withFooter(t, body, md)
	t.Logf("%d bytes", len(hostile))
	_, err := OpenParquet(context.Background(), bytes.NewReader(hostile), int64(len(hostile)), Options{FileName: "overlap.parquet"})
	if err == nil || !strings.Contains(err.Error(), `overlap.parquet: corrupt Parquet data: row group 2, column "bill_payer_account_id": its pages overlap another column's`) {
		t.Fatalf("overlapping chunks: %v", err)
	}
	// Pages are walked once each: a reader counting reads sees no byte of
	// the file read twice by the page check of a good file.
	good = writeCUR2Parquet(t, cur2Sample(2000), 200)
	cr := &countingReaderAt{r: bytes.NewReader(good)}
	f, err := readParquetFooter(cr, int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	cr.n = 0
	if err := checkPages(context.Background(), cr, f); err != nil {
		t.Fatal(err)
	}
	if cr.n > int64(len(good))+int64(len(f.chunks))*maxPageHeader {
		t.Errorf("checking pages read %d bytes of a %d-byte file", cr.n, len(good))
	}
}

type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// TestParquetPageValuesBombRefused: a page header claiming 2^31-1 values
// (the library allocates bytes per claimed value to decode its levels and
// offsets) is refused before any page is read.
func TestParquetPageValuesBombRefused(t *testing.T) {
	t.Parallel()
	good := writeCUR2Parquet(t, cur2Sample(50), 50)
	hostile := rewriteFirstPage(t, good, func(h *format.PageHeader) {
		if h.DictionaryPageHeader.Valid {
			h.DictionaryPageHeader.V.NumValues = 1<<31 - 1
		}
		if h.DataPageHeader.Valid {
			h.DataPageHeader.V.NumValues = 1<<31 - 1
		}
		if h.DataPageHeaderV2.Valid {
			h.DataPageHeaderV2.V.NumValues = 1<<31 - 1
		}
	})
	_, err := OpenParquet(context.Background(), bytes.NewReader(hostile), int64(len(hostile)), Options{FileName: "values.parquet"})
	if err == nil || !strings.Contains(err.Error(), "a page claims 2147483647 values (at most 8388608 are read)") {
		t.Fatalf("values bomb: %v", err)
	}
}

// TestParquetCancelled: checking a file's pages stops when the import's
// context ends.
func TestParquetCancelled(t *testing.T) {
	t.Parallel()
	good := writeCUR2Parquet(t, cur2Sample(20000), 10)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("the client went away")
	cancel(stop)
	_, err := OpenParquet(ctx, bytes.NewReader(good), int64(len(good)), Options{FileName: "x.parquet"})
	if !errors.Is(err, stop) {
		t.Fatalf("cancelled: %v", err)
	}
	var buf bytes.Buffer
	if err := ParquetCSV(ctx, bytes.NewReader(good), int64(len(good)), "x.parquet", &buf); !errors.Is(err, stop) {
		t.Fatalf("cancelled ParquetCSV: %v", err)
	}
}

// FuzzParquetFooter: any footer is refused or read, never a panic, and a
// refused one names the file.
func FuzzParquetFooter(f *testing.F) {
	good := writeCUR2Parquet(f, cur2Sample(20), 10)
	body, md := footerOf(f, good)
	footer, err := thrift.Marshal(&thrift.CompactProtocol{}, md)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(footer)
	f.Add(footer[:len(footer)/2])
	f.Fuzz(func(t *testing.T, footer []byte) {
		file := append(bytes.Clone(body), footer...)
		file = binary.LittleEndian.AppendUint32(file, uint32(len(footer)))
		file = append(file, parquetMagic...)
		rd, err := OpenParquet(context.Background(), bytes.NewReader(file), int64(len(file)), Options{FileName: "f.parquet"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.parquet") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		var row Row
		for range 1000 {
			if err := rd.Next(&row); err != nil {
				return
			}
		}
	})
}
