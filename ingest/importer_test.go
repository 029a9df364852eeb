package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type importBundle struct {
	st  *store.Store
	im  *Importer
	org store.Org
}

func setupImport(t *testing.T) importBundle {
	t.Helper()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	return importBundle{st: st, im: NewImporter(st, testPrices, testGPUs), org: org}
}

// chargesAndImports counts the org's charges and lists its last imports.
func (b importBundle) chargesAndImports(t *testing.T) (int, []store.Import) {
	t.Helper()
	var n int
	if err := b.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM charges WHERE org_id = $1`, b.org.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	imps, err := b.st.Imports(context.Background(), b.org.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	return n, imps
}

func (b importBundle) importFile(t *testing.T, name string, body []byte) (ImportResult, error) {
	t.Helper()
	req := ImportRequest{Org: b.org, FileName: name, Via: "test"}
	if strings.HasPrefix(name, "generic_costs") {
		req.Mapping = genericMapping
	}
	return b.im.Import(context.Background(), req, bytes.NewReader(body))
}

// storedTotals sums billed cost per currency in charges and in daily_spend.
func storedTotals(t *testing.T, st *store.Store, orgID int64) (charges, rollup map[string]*big.Rat) {
	t.Helper()
	sum := func(q string) map[string]*big.Rat {
		rows, err := st.Pool().Query(context.Background(), q, orgID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]*big.Rat{}
		for rows.Next() {
			var cur, total string
			if err := rows.Scan(&cur, &total); err != nil {
				t.Fatal(err)
			}
			r, _ := new(big.Rat).SetString(total)
			out[cur] = r
		}
		return out
	}
	return sum(`SELECT billing_currency, sum(billed_cost)::text FROM charges WHERE org_id = $1 GROUP BY 1`),
		sum(`SELECT currency, sum(billed)::text FROM daily_spend WHERE org_id = $1 GROUP BY 1`)
}

// TestImportEverySample imports each sample into its own org and checks the
// stored total, to the last decimal, against the file's own cost column
// summed independently (expectedTotals reads the CSV without the parsers).
func TestImportEverySample(t *testing.T) {
	t.Parallel()
	for _, path := range sampleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			b := setupImport(t)
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := b.importFile(t, filepath.Base(path), body)
			if err != nil {
				t.Fatal(err)
			}
			want, wantRows := expectedTotals(t, path)
			if res.Rows != int64(wantRows) && res.Rows+res.SkippedRows != int64(wantRows) {
				t.Errorf("rows = %d (+%d skipped), want %d", res.Rows, res.SkippedRows, wantRows)
			}
			charges, rollup := storedTotals(t, b.st, b.org.ID)
			for cur, w := range want {
				if g := charges[cur]; g == nil || g.Cmp(w) != 0 {
					t.Errorf("stored total %s = %v, want %v", cur, ratString(g), ratString(w))
				}
				if g := rollup[cur]; g == nil || g.Cmp(w) != 0 {
					t.Errorf("daily_spend total %s = %v, want %v", cur, ratString(g), ratString(w))
				}
				if res.Totals[cur] == "" {
					t.Errorf("result lacks a %s total: %v", cur, res.Totals)
				}
			}
			if len(charges) != len(want) {
				t.Errorf("currencies stored %v, want %v", keys(charges), keys(want))
			}
			if res.PeriodStart == nil || res.PeriodEnd == nil || *res.PeriodStart > *res.PeriodEnd {
				t.Errorf("period = %v – %v", res.PeriodStart, res.PeriodEnd)
			}
		})
	}
}

func TestImportSameFileTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	body, _ := os.ReadFile("testdata/exports/focus/focus_sample_1.0.csv")
	first, err := b.importFile(t, "focus.csv", body)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := storedTotals(t, b.st, b.org.ID)
	again, err := b.importFile(t, "focus-again.csv", body)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.ID != first.ID {
		t.Fatalf("second import = %+v, want duplicate of %d", again, first.ID)
	}
	after, _ := storedTotals(t, b.st, b.org.ID)
	for cur := range before {
		if before[cur].Cmp(after[cur]) != 0 {
			t.Fatalf("re-import changed %s total: %v → %v", cur, ratString(before[cur]), ratString(after[cur]))
		}
	}
	// The duplicate leaves no entry of its own in the history.
	if imps, err := b.st.Imports(context.Background(), b.org.ID, 10); err != nil || len(imps) != 1 {
		t.Fatalf("history after a duplicate = %d entries (%v), want 1", len(imps), err)
	}
	// Concurrent uploads of one new file: one import, the rest duplicates.
	body2, _ := os.ReadFile("testdata/exports/aws/test_cur.csv")
	var wg sync.WaitGroup
	results := make(chan ImportResult, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := b.importFile(t, "cur.csv", body2)
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	wg.Wait()
	close(results)
	fresh := 0
	for res := range results {
		if !res.Duplicate {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d of 4 concurrent uploads of one file were imported, want 1", fresh)
	}
}

func TestImportRestatedExportReplaces(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	body, _ := os.ReadFile("testdata/exports/aws/test_cur.csv")
	if _, err := b.importFile(t, "cur-v1.csv", body); err != nil {
		t.Fatal(err)
	}
	want, _ := storedTotals(t, b.st, b.org.ID)
	// The next day's export of the same month: same rows, one more blank
	// line at the end so that the hash differs.
	res, err := b.importFile(t, "cur-v2.csv", append(append([]byte{}, body...), '\n'))
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicate || res.ReplacedRows != res.Rows {
		t.Fatalf("restated import = %+v, want every earlier row replaced", res)
	}
	got, rollup := storedTotals(t, b.st, b.org.ID)
	for cur := range want {
		if got[cur].Cmp(want[cur]) != 0 || rollup[cur].Cmp(want[cur]) != 0 {
			t.Fatalf("after restatement %s = %v (rollup %v), want %v: counted twice?", cur, ratString(got[cur]), ratString(rollup[cur]), ratString(want[cur]))
		}
	}
}

func TestImportCorruptLineWritesNothing(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	body, _ := os.ReadFile("testdata/exports/focus/focus_sample_1.0.csv")
	lines := strings.Split(string(body), "\n")
	// Break BilledCost on a line in the middle of the file.
	hdr := strings.Split(lines[0], ",")
	col := -1
	for i, h := range hdr {
		if strings.Trim(h, `"`) == "BilledCost" {
			col = i
		}
	}
	mid := len(lines) / 2
	fields := strings.Split(lines[mid], ",")
	fields[col] = `"12,5"`
	lines[mid] = strings.Join(fields, ",")
	_, err := b.importFile(t, "broken.csv", []byte(strings.Join(lines, "\n")))
	var ierr *ImportError
	if !errors.As(err, &ierr) {
		t.Fatalf("err = %v, want *ImportError", err)
	}
	line, column := ierr.Position()
	if line != mid+1 || column != "BilledCost" || !strings.Contains(err.Error(), `"12,5" is not a number`) {
		t.Fatalf("error = %q at line %d column %q, want line %d column BilledCost", err, line, column, mid+1)
	}
	var n int
	if err := b.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM charges WHERE org_id = $1`, b.org.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("charges after a failed import = %d (%v), want 0", n, err)
	}
	imp, err := b.st.Import(context.Background(), b.org.ID, ierr.ImportID)
	if err != nil || imp.Status != store.ImportFailed || imp.ErrorLine == nil || *imp.ErrorLine != mid+1 || imp.ErrorColumn != "BilledCost" {
		t.Fatalf("history row = %+v, %v; want failed at line %d", imp, err, mid+1)
	}
	// The fixed file imports fine afterwards.
	if _, err := b.importFile(t, "fixed.csv", body); err != nil {
		t.Fatal(err)
	}
}

func TestImportEmptyUploads(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	for name, body := range map[string][]byte{
		"zero.csv":        nil,
		"header-only.csv": []byte("BilledCost,ChargePeriodStart\n"),
		"nonsense.csv":    []byte("a,b,c\n1,2,3\n"),
	} {
		_, err := b.importFile(t, name, body)
		var ierr *ImportError
		if !errors.As(err, &ierr) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want an ImportError naming the file", name, err)
		}
	}
}

func TestImportReportsProgress(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	var buf bytes.Buffer
	if err := curgen.Generate(&buf, 25_000, 7); err != nil {
		t.Fatal(err)
	}
	var seen []int64
	req := ImportRequest{Org: b.org, FileName: "cur.csv", Via: "test", Progress: func(rows int64) { seen = append(seen, rows) }}
	res, err := b.im.Import(context.Background(), req, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 25_000 || len(seen) != 2 || seen[0] != 10_000 || seen[1] != 20_000 {
		t.Fatalf("rows %d, progress reports %v; want 25000 rows and reports at 10000, 20000", res.Rows, seen)
	}
}

// TestImportOutOfRangeCostWritesNothing: a cost beyond money's range fails
// the import at its line and column, quickly, and writes nothing. 1e30 was
// once imported as is; 1e999999999 was refused only as "not a number".
func TestImportOutOfRangeCostWritesNothing(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	body, _ := os.ReadFile("testdata/exports/focus/focus_sample_1.0.csv")
	lines := strings.Split(string(body), "\n")
	col := -1
	for i, h := range strings.Split(lines[0], ",") {
		if strings.Trim(h, `"`) == "BilledCost" {
			col = i
		}
	}
	mid := len(lines) / 2
	for _, cell := range []string{"1e999999999", "1e30", "-1e15", strings.Repeat("9", 1<<20)} {
		broken := append([]string(nil), lines...)
		fields := strings.Split(broken[mid], ",")
		fields[col] = cell
		broken[mid] = strings.Join(fields, ",")
		start := time.Now()
		_, err := b.importFile(t, "huge.csv", []byte(strings.Join(broken, "\n")))
		var ierr *ImportError
		if !errors.As(err, &ierr) {
			t.Fatalf("%.20s: err = %v, want *ImportError", cell, err)
		}
		line, column := ierr.Position()
		if line != mid+1 || column != "BilledCost" {
			t.Fatalf("%.20s: error %.200q at line %d column %q, want line %d column BilledCost", cell, err, line, column, mid+1)
		}
		if len(cell) < 20 && (!errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "is out of range: money must")) {
			t.Fatalf("%s: error %q does not give money's bound", cell, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%.20s: refusing the file took %s", cell, d)
		}
	}
	var n int
	if err := b.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM charges WHERE org_id = $1`, b.org.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("charges after failed imports = %d (%v), want 0", n, err)
	}
}

// TestImportRefusesFileNamesPostgresCannotStore: a file name that is not
// UTF-8 or holds a NUL (a CLI file on disk, an API upload's multipart name)
// is refused as the file's fault, before anything is recorded.
func TestImportRefusesFileNamesPostgresCannotStore(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	body := mustRead(t, "testdata/exports/focus/focus_sample_1.0.csv")
	for name, want := range map[string]string{
		"factur\xe9.csv": `filename "factur\xe9.csv": not valid UTF-8; nothing was imported`,
		"a\x00.csv":      `filename "a\x00.csv": contains a NUL byte; nothing was imported`,
	} {
		_, err := b.importFile(t, name, body)
		var ierr *ImportError
		if !errors.As(err, &ierr) || err.Error() != want || ierr.HTTPStatus() != 422 {
			t.Errorf("%q: error %v, want an ImportError %s", name, err, want)
		}
	}
	if imps, err := b.st.Imports(context.Background(), b.org.ID, 10); err != nil || len(imps) != 0 {
		t.Fatalf("history after refused names: %d entries, %v", len(imps), err)
	}
}

// failingReader fails its first read, as a pulled file whose server
// refused it does.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

// TestImportReportsTheReadersFirstError: a stream that fails on its first
// read is that failure, named, not an empty file.
func TestImportReportsTheReadersFirstError(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	refused := errors.New("403 from S3: the credentials lack s3:GetObject on cur/x.csv.gz")
	_, err := b.im.Import(context.Background(), ImportRequest{Org: b.org, FileName: "x.csv", Via: "test"}, failingReader{refused})
	if !errors.Is(err, refused) || errors.Is(err, ErrEmpty) {
		t.Fatalf("err = %v, want the reader's", err)
	}
}

// cancellingReader calls cancel once after bytes have been read through
// it, and counts what was read.
type cancellingReader struct {
	r      io.Reader
	after  int64
	n      int64
	cancel func()
	slow   time.Duration // each read waits this long
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if c.slow > 0 {
		time.Sleep(c.slow)
		p = p[:min(len(p), 4096)]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.cancel != nil && c.n >= c.after {
		c.cancel()
		c.cancel = nil
	}
	return n, err
}

// TestImportHonoursItsContext: an import stops reading and writes nothing
// when its request goes away mid-file, and when its own wall-clock budget
// (Importer.Timeout, IMPORT_TIMEOUT) runs out; the history says which.
func TestImportHonoursItsContext(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := curgen.Generate(&buf, 100_000, 7); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	b := setupImport(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cr := &cancellingReader{r: bytes.NewReader(file), after: 1 << 20, cancel: cancel}
	_, err := b.im.Import(ctx, ImportRequest{Org: b.org, FileName: "gone.csv", Via: "test"}, cr)
	var ierr *ImportError
	if !errors.As(err, &ierr) || !strings.Contains(err.Error(), "gone.csv: the upload was cancelled before it finished; nothing was imported") {
		t.Fatalf("cancelled: %v", err)
	}
	if cr.n > int64(len(file))/2 {
		t.Errorf("read %d of %d bytes after the request went away at 1 MB", cr.n, len(file))
	}

	im := *b.im
	im.Timeout = 300 * time.Millisecond
	slow := &cancellingReader{r: bytes.NewReader(file), slow: 2 * time.Millisecond}
	_, err = im.Import(context.Background(), ImportRequest{Org: b.org, FileName: "slow.csv", Via: "test"}, slow)
	if !errors.As(err, &ierr) || !strings.Contains(err.Error(), "slow.csv: the import took longer than 300ms, the most one may take on this server; nothing was imported") {
		t.Fatalf("timed out: %v", err)
	}
	if slow.n >= int64(len(file)) {
		t.Errorf("the whole file was read after the import ran out of time")
	}
	n, imps := b.chargesAndImports(t)
	if n != 0 || len(imps) != 2 || imps[0].Status != store.ImportFailed || imps[1].Status != store.ImportFailed {
		t.Fatalf("%d charges; imports %+v", n, imps)
	}
	if !strings.Contains(imps[0].Error, "took longer than") || !strings.Contains(imps[1].Error, "cancelled") {
		t.Errorf("history says %q and %q", imps[0].Error, imps[1].Error)
	}
}
