// Command curgen writes a realistic legacy AWS Cost and Usage Report (about
// 130 columns, GPU and non-GPU instances, tags, credits, several days) for
// benchmarks: curgen -rows 1000000 > cur.csv. With -parquet FILE it writes
// the same rows as Parquet instead (text columns, row groups of 100,000
// rows), to compare the two paths on the same data.
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/burnrate/burnrate/ingest/curgen"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "data rows to write")
	seed := flag.Int64("seed", 1, "random seed")
	pq := flag.String("parquet", "", "write the rows as Parquet to this file instead of CSV to stdout")
	flag.Parse()
	var err error
	if *pq != "" {
		err = writeParquet(*pq, *rows, *seed)
	} else {
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		if err = curgen.Generate(w, *rows, *seed); err == nil {
			err = w.Flush()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "curgen:", err)
		os.Exit(1)
	}
}

// writeParquet converts the generated CSV to Parquet as it is generated.
func writeParquet(path string, rows int, seed int64) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(curgen.Generate(pw, rows, seed)) }()
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
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := parquet.NewWriter(f, schema, parquet.MaxRowsPerRowGroup(100_000), parquet.Compression(&parquet.Snappy))
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
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}
