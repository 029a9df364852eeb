package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// viewTimes splits the time of dashboard views not cached yet into their
// queries (as the client sees each: round trip, execution and reading the
// rows) and the rest, which is Go: the handler's work, rendering and
// gzip. It serves the app in process, on the app's own pool settings and
// types, and asks the views bench-dashboard's "cold" requests ask: the
// range shifted back 0–59 days, a new view every time, one at a time.
func viewTimes(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("views", flag.ExitOnError)
	email := fs.String("email", "bench@example.com", "log in as")
	password := fs.String("password", "", "password")
	n := fs.Int("n", 60, "views of each length")
	groupList := fs.String("groups", "provider,service,account,team,model,source", "the group-bys the views take in turn, comma-separated")
	dayList := fs.String("days", "30,90,365", "the views' lengths in days, comma-separated")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the views (the in-process server and the client) to this file")
	_ = fs.Parse(args)
	groups := strings.Split(*groupList, ",")
	var lengths []int
	for _, d := range strings.Split(*dayList, ",") {
		days, err := strconv.Atoi(d)
		if err != nil || days < 1 {
			return fmt.Errorf("-days: %q is not a number of days", d)
		}
		lengths = append(lengths, days)
	}
	qt := &queryTimer{by: map[string]*queryTime{}}
	app, err := serveInProcess(ctx, qt, *email, *password)
	if err != nil {
		return err
	}
	defer app.close()
	ts, client := app.ts, app.client
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	to := time.Now().UTC()
	k := 0
	for _, days := range lengths {
		name := fmt.Sprintf("%dd", days)
		var ds []time.Duration
		for i := 0; i <= *n; i++ {
			k++
			t := to.AddDate(0, 0, -(k % 60))
			f := t.AddDate(0, 0, 1-days)
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/dashboard?range=custom&from="+f.Format(time.DateOnly)+
				"&to="+t.Format(time.DateOnly)+"&group="+groups[(k/7)%len(groups)], nil)
			req.Header.Set("Accept-Encoding", "gzip")
			if i == 1 {
				qt.setPhase(name) // the first view warms up
			}
			start := time.Now()
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s", req.URL, res.Status)
			}
			if i > 0 {
				ds = append(ds, time.Since(start))
			}
		}
		qt.setPhase("")
		var total, inQueries time.Duration
		for _, d := range ds {
			total += d
		}
		for _, q := range qt.queries(name) {
			inQueries += q.total
		}
		per := func(d time.Duration) float64 { return ms(d / time.Duration(len(ds))) }
		fmt.Printf("\n%s cold views, n=%d: p50 %.1f ms  p95 %.1f ms  mean %.1f ms = queries %.1f ms + the rest (Go) %.1f ms\n",
			name, len(ds), ms(percentile(ds, .5)), ms(percentile(ds, .95)), per(total), per(inQueries), per(total-inQueries))
		for _, q := range qt.queries(name) {
			fmt.Printf("    %5.2fx mean %6.2f ms  max %6.2f ms  %s\n", float64(q.n)/float64(len(ds)),
				ms(q.total/time.Duration(q.n)), ms(q.max), oneLine(q.sql, 100))
		}
	}
	return nil
}
