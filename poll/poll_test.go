package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWithinReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	start := time.Now()
	if !Within(5*time.Second, func() bool { return calls.Add(1) == 3 }) {
		t.Fatal("the condition held on the third call, and Within said no")
	}
	if calls.Load() != 3 || time.Since(start) > time.Second {
		t.Errorf("%d calls in %s", calls.Load(), time.Since(start))
	}
}

func TestWithinGivesUpAtTheDeadline(t *testing.T) {
	start := time.Now()
	if Within(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never held")
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %s", d)
	}
}
