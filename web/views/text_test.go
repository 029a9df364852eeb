package views

import (
	"strings"
	"testing"
)

func TestGist(t *testing.T) {
	if got := gist("short message", 160); got != "short message" {
		t.Errorf("short = %q", got)
	}
	long := strings.Repeat("It is not an AWS CUR (no lineItem/UnblendedCost column), ", 10)
	got := gist(long, 160)
	if len([]rune(got)) > 161 || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("long = %q", got)
	}
}
