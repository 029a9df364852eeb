package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Hostile Parquet files, built here as the ingest tests build them: a real
// file's pages with a footer written to lie.

// focusRow is a FOCUS row as a Parquet export types it.
type focusRow struct {
	BillingAccountID  string `parquet:"BillingAccountId"`
	ChargePeriodStart string `parquet:"ChargePeriodStart"`
	ChargePeriodEnd   string `parquet:"ChargePeriodEnd"`
	BilledCost        string `parquet:"BilledCost"`
	BillingCurrency   string `parquet:"BillingCurrency"`
	ProviderName      string `parquet:"ProviderName"`
	ServiceName       string `parquet:"ServiceName"`
	ChargeCategory    string `parquet:"ChargeCategory"`
}

// goodParquet is a FOCUS file of n rows of yesterday, perGroup to a row
// group.
func goodParquet(n, perGroup int) []byte {
	day := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	rows := make([]focusRow, n)
	for i := range rows {
		rows[i] = focusRow{fmt.Sprintf("acct-%d", i%7), day + "T00:00:00Z", day + "T01:00:00Z", fmt.Sprintf("%d.25", i%90),
			"USD", "AWS", "Amazon EC2", "Usage"}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[focusRow](&buf, parquet.MaxRowsPerRowGroup(int64(perGroup)))
	if _, err := w.Write(rows); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// split returns a file's pages (all before its footer) and its footer.
func split(file []byte) ([]byte, *format.FileMetaData) {
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		panic(err)
	}
	n := binary.LittleEndian.Uint32(file[len(file)-8:])
	md := *f.Metadata()
	return file[:len(file)-8-int(n)], &md
}

// withFooter is body, then footer as the file's metadata.
func withFooter(body, footer []byte) []byte {
	out := append(bytes.Clone(body), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

func marshal(md *format.FileMetaData) []byte {
	b, err := thrift.Marshal(&thrift.CompactProtocol{}, md)
	if err != nil {
		panic(err)
	}
	return b
}

// deepSchema nests depth groups, one in the other, around one column: the
// library's schema costs grow with the square of the depth.
func deepSchema(depth int) []byte {
	schema := make([]format.SchemaElement, 0, depth+1)
	for range depth {
		schema = append(schema, format.SchemaElement{Name: "g", NumChildren: thrift.New(int32(1)), RepetitionType: thrift.New(format.Optional)})
	}
	schema = append(schema, format.SchemaElement{Name: "BilledCost", Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Optional)})
	md := &format.FileMetaData{Version: 1, Schema: schema, NumRows: 1, RowGroups: []format.RowGroup{{NumRows: 1,
		Columns: []format.ColumnChunk{{MetaData: format.ColumnMetaData{Type: format.ByteArray, PathInSchema: []string{"BilledCost"},
			Codec: format.Uncompressed, NumValues: 1, DataPageOffset: 4}}}}}}
	return withFooter([]byte("PAR1"), marshal(md))
}

// overlappingChunks is a real file whose copies row groups all name the
// first row group's pages: every page walked again for each copy.
func overlappingChunks(rows, copies int) []byte {
	body, md := split(goodParquet(rows, rows))
	rg := md.RowGroups[0]
	md.RowGroups = make([]format.RowGroup, copies)
	for i := range md.RowGroups {
		md.RowGroups[i] = rg
	}
	md.NumRows = rg.NumRows * int64(copies)
	return withFooter(body, marshal(md))
}

// pageValuesBomb is a real file whose first page claims 2^31-1 values (the
// library allocates bytes per claimed value to decode them).
func pageValuesBomb() []byte {
	file := goodParquet(50, 50)
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		panic(err)
	}
	m := f.Metadata().RowGroups[0].Columns[0].MetaData
	off := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < off {
		off = m.DictionaryPageOffset
	}
	var h format.PageHeader
	r := (&thrift.CompactProtocol{}).NewReaderFromBytes(file[off:])
	if err := thrift.NewDecoder(r).Decode(&h); err != nil {
		panic(err)
	}
	for _, v := range []*int32{&h.DataPageHeader.V.NumValues, &h.DataPageHeaderV2.V.NumValues, &h.DictionaryPageHeader.V.NumValues} {
		*v = 1<<31 - 1
	}
	b, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
	if err != nil {
		panic(err)
	}
	return append(append(bytes.Clone(file[:off]), b...), file[off+int64(r.BytesRead()):]...)
}

// listLengthBomb is a footer whose schema list claims 2^31-1 elements in
// nine bytes (allocated before the first is read).
func listLengthBomb() []byte {
	body, _ := split(goodParquet(10, 10))
	return withFooter(body, []byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00, 0x00})
}

// nestedStructBomb is a footer of structs nested n deep in an unknown
// field (decoded by recursion).
func nestedStructBomb(n int) []byte {
	body, _ := split(goodParquet(10, 10))
	footer := append(bytes.Repeat([]byte{0xfc}, n), bytes.Repeat([]byte{0}, n+1)...)
	return withFooter(body, footer)
}
