// Package poll is for tests that wait on something another goroutine,
// process or job does: they wait for the condition itself, checked often,
// instead of sleeping a fixed time and hoping it was enough (too short
// fails on a busy machine, too long wastes every run).
package poll

import (
	"testing"
	"time"
)

// Every is how often Until checks its condition.
const Every = 10 * time.Millisecond

// Until calls cond every Every until it reports true, and fails t, saying
// what it waited for, if that takes longer than within.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(within, cond) {
		t.Fatalf("waited %s for %s", within, what)
	}
}

// Within calls cond every Every until it reports true or d has passed, and
// reports whether it did.
func Within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Every)
	}
}
