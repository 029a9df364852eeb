package browsertest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeT is the testing.TB New is given, named as the test wants, recording
// the failure New reports instead of failing the real test.
type fakeT struct {
	testing.TB
	name   string
	failed string
}

func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Helper()      {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// A test that drives a browser under another name than TestBrowser… would
// run in make test-fast; New fails it, saying why, before any browser starts.
func TestNewRefusesATestTheFastTierWouldRun(t *testing.T) {
	for _, name := range []string{"TestDashboard", "TestBrowse", "Testbrowser", "TestDashboard/TestBrowserSub"} {
		f := &fakeT{TB: t, name: name}
		done := make(chan struct{})
		go func() {
			defer close(done)
			New(f, time.Second)
			t.Errorf("%s: New started a browser", name)
		}()
		<-done
		if !strings.Contains(f.failed, "must begin with TestBrowser") {
			t.Errorf("%s: failure %q", name, f.failed)
		}
	}
}

// make test-fast leaves out exactly the tests New lets drive a browser.
func TestMakeTestFastSkipsTheBrowserTests(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	want := "-skip '^" + NamePrefix + "'"
	if !strings.Contains(string(mk), want) {
		t.Errorf("Makefile's test-fast does not pass %s", want)
	}
}
