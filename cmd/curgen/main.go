// Command curgen writes a realistic legacy AWS Cost and Usage Report (about
// 130 columns, GPU and non-GPU instances, tags, credits, several days) for
// benchmarks: curgen -rows 1000000 > cur.csv
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
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := curgen.Generate(w, *rows, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "curgen:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "curgen:", err)
		os.Exit(1)
	}
}
