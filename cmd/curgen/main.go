// Command curgen writes a realistic legacy AWS Cost and Usage Report (about
// 130 columns, GPU and non-GPU instances, tags, credits, several days) for
// benchmarks: curgen -rows 1000000 > cur.csv. With -parquet FILE it writes
// the same rows as Parquet instead (text columns, row groups of 100,000
// rows), to compare the two paths on the same data.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/burnrate/burnrate/ingest/curgen"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "data rows to write")
	seed := flag.Int64("seed", 1, "random seed")
	pq := flag.String("parquet", "", "write the rows as Parquet to this file instead of CSV to stdout")
	flag.Parse()
	var err error
	if *pq != "" {
		err = writeParquetFile(*pq, *rows, *seed)
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

func writeParquetFile(path string, rows int, seed int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := curgen.GenerateParquet(w, rows, seed); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
