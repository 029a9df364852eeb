package web

import "testing"

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ next, want string }{
		{"/dashboard", "/dashboard"},
		{"/budgets/7?tab=alerts#history", "/budgets/7?tab=alerts#history"},
		{"/dashboard?from=2026-01-01&group=a%2Fb", "/dashboard?from=2026-01-01&group=a%2Fb"},
		{"/join/AbC-123_x", "/join/AbC-123_x"},
		{"", "/"},
		{"dashboard", "/"},
		{`/\evil.example`, "/"},
		{`\/evil.example`, "/"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"/\r\n/evil.example", "/"},
		{"/\x00/evil.example", "/"},
		{"/\u0085/evil.example", "/"},
		{"/%09/evil.example", "/"},
		{"/%5Cevil.example", "/"},
		{"/%2F/evil.example", "/"},
		{"/%2fevil.example", "/"},
		{"%2F%2Fevil.example", "/"},
		{"//evil.example", "/"},
		{"///evil.example", "/"},
		{"//evil.example/dashboard", "/"},
		{"https://evil.example", "/"},
		{"https:/evil.example", "/"},
		{"HTTPS://evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"JaVaScRiPt:alert(1)", "/"},
		{"data:text/html,<script>alert(1)</script>", "/"},
		{" //evil.example", "/"},
		{"/%", "/"},
	} {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}
