package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestEveryOrgCommandNamesAMissingOrg runs each subcommand that works on
// one org against a slug nobody has: every one fails with the same message,
// prefixed by the command, and import adds how to make an org.
func TestEveryOrgCommandNamesAMissingOrg(t *testing.T) {
	t.Parallel()
	e := env(map[string]string{"DATABASE_URL": storetest.URL(t), "LOG_LEVEL": "error"})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "--org", "nobody", "x.csv"}, `import: no org with slug "nobody" (burnrate org create makes one)`},
		{[]string{"digest", "--org", "nobody"}, `digest: no org with slug "nobody"`},
		{[]string{"savings", "--org", "nobody"}, `savings: no org with slug "nobody"`},
		{[]string{"org", "plan", "--org", "nobody"}, `org plan: no org with slug "nobody"`},
		{[]string{"connection", "list", "--org", "nobody"}, `connection: no org with slug "nobody"`},
		{[]string{"imports", "list", "--org", "nobody"}, `imports: no org with slug "nobody"`},
		{[]string{"advise", "--org", "nobody", "--job", "serving", "--model", "llama-3.1-8b"}, `advise: no org with slug "nobody"`},
		{[]string{"breakeven", "--org", "nobody", "--model", "gpt-4o"}, `breakeven: no org with slug "nobody"`},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), tc.args, e, &out, &bytes.Buffer{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("%s: err = %v, want %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
}
