package curgen

import (
	"bufio"
	"encoding/csv"
	"io"

	"github.com/parquet-go/parquet-go"
)

// GenerateParquet writes the rows Generate writes as a Parquet file
// instead: text columns under the same names, snappy, row groups of
// 100,000 rows. It converts the CSV as it is generated.
func GenerateParquet(out io.Writer, rows int, seed int64) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(Generate(pw, rows, seed)) }()
	cr := csv.NewReader(bufio.NewReaderSize(pr, 1<<20))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	hdr, err := cr.Read()
	if err != nil {
		return err
	}
	hdr = append([]string(nil), hdr...)
	group := parquet.Group{}
	for _, h := range hdr {
		group[h] = parquet.Optional(parquet.String())
	}
	schema := parquet.NewSchema("cur", group)
	index := map[string]int{}
	for i, path := range schema.Columns() {
		index[path[0]] = i
	}
	w := parquet.NewWriter(out, schema, parquet.MaxRowsPerRowGroup(100_000), parquet.Compression(&parquet.Snappy))
	batch := make([]parquet.Row, 0, 1000)
	flush := func() error {
		_, err := w.WriteRows(batch)
		batch = batch[:0]
		return err
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		row := make(parquet.Row, len(hdr))
		for i, h := range hdr {
			c := index[h]
			v := parquet.Value{}
			if i < len(rec) && rec[i] != "" {
				v = parquet.ByteArrayValue([]byte(rec[i])).Level(0, 1, c)
			} else {
				v = v.Level(0, 0, c)
			}
			row[c] = v
		}
		if batch = append(batch, row); len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return w.Close()
}
