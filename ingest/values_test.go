package ingest

import (
	"maps"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	t.Parallel()
	utc := func(y int, mo time.Month, d, h, mi, s, ms int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2018-06-01T00:00:00Z", utc(2018, 6, 1, 0, 0, 0, 0)},
		{"2025-10-27T00:00:00+00:00", utc(2025, 10, 27, 0, 0, 0, 0)},
		{"2025-10-27T02:00:00+02:00", utc(2025, 10, 27, 0, 0, 0, 0)},
		{"2022-07-01 00:00:00.000", utc(2022, 7, 1, 0, 0, 0, 0)},
		{"2020-11-10 05:49:32.199000+00:00", utc(2020, 11, 10, 5, 49, 32, 199)},
		{"2025-01-15 10:20:30.123+00", utc(2025, 1, 15, 10, 20, 30, 123)},
		{"2025-01-15 10:20:30-0500", utc(2025, 1, 15, 15, 20, 30, 0)},
		{"2020-11-09 23:00:00 UTC", utc(2020, 11, 9, 23, 0, 0, 0)},
		{"2024-09-18 22:00", utc(2024, 9, 18, 22, 0, 0, 0)},
		{"2019-07-29", utc(2019, 7, 29, 0, 0, 0, 0)},
		{"09/21/2023", utc(2023, 9, 21, 0, 0, 0, 0)},
		{"5/1/25", utc(2025, 5, 1, 0, 0, 0, 0)},
		{"9/21/2023 1:05:00 PM", utc(2023, 9, 21, 13, 5, 0, 0)},
		{"1761523200", utc(2025, 10, 27, 0, 0, 0, 0)},
		{"1761523200.0", utc(2025, 10, 27, 0, 0, 0, 0)},
		{"1761523200000", utc(2025, 10, 27, 0, 0, 0, 0)},
		{"20201101", utc(2020, 11, 1, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		got, ok := parseTime(tt.in)
		if !ok || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tt.in, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"", "June 1st", "2019-13-01", "13/45/2023", "2019-07-29X10:00:00", "12345"} {
		if got, ok := parseTime(bad); ok {
			t.Errorf("parseTime(%q) = %v, want failure", bad, got)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"": "0", "0": "0", "0.00000000000": "0", "12.5": "12.5", "-0.0000016": "-0.0000016", "+3": "3",
		"5e-06": "0.000005", "-1E+3": "-1000", "0.0061215770588837586": "0.0061215770588837586",
		" 1.5 ": "1.5", ".5": "0.5", "5.": "5", "123456789012345678901234.5": "123456789012345678901234.5",
		"1e-99": "0", // below the 24 decimal places kept
	}
	for in, want := range good {
		d, ok := parseDecimal(in)
		if !ok || d.String() != want {
			t.Errorf("parseDecimal(%q) = %s, %v; want %s", in, d, ok, want)
		}
	}
	for _, bad := range []string{"12,5", "$3", "1_000", "NaN", "Inf", "-", ".", "1e999", "0x10", "1.2.3", "--1"} {
		if d, ok := parseDecimal(bad); ok {
			t.Errorf("parseDecimal(%q) = %s, want failure", bad, d)
		}
	}
	counts := map[string]int64{"": 0, "3": 3, "3.0": 3, "1e3": 1000}
	for in, want := range counts {
		if n, ok := parseCount(in); !ok || n != want {
			t.Errorf("parseCount(%q) = %d, %v", in, n, ok)
		}
	}
	for _, bad := range []string{"-1", "2.5", "x", "1e40"} {
		if n, ok := parseCount(bad); ok {
			t.Errorf("parseCount(%q) = %d, want failure", bad, n)
		}
	}
}

func TestParseTagMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want map[string]string
	}{
		{`{"team":"ml","n":3,"b":true,"z":null}`, map[string]string{"team": "ml", "n": "3", "b": "true", "z": ""}},
		{`"CostCenter": "1234","env": "prod"`, map[string]string{"CostCenter": "1234", "env": "prod"}},
		{`[{'key': 'goog-resource-type', 'value': 'bigquery_dataset'}]`, map[string]string{"goog-resource-type": "bigquery_dataset"}},
		{`{team=ml, env=prod}`, map[string]string{"team": "ml", "env": "prod"}},
		{`["team:ml", "batch-eval"]`, map[string]string{"team": "ml", "batch-eval": "true"}},
		{`{'it\'s': 'a \"b\"'}`, map[string]string{"it's": `a "b"`}},
		{``, map[string]string{}},
		{`[]`, map[string]string{}},
	}
	for _, tt := range tests {
		got := map[string]string{}
		if err := parseTagMap(tt.in, func(k, v string) { got[k] = v }); err != nil {
			t.Errorf("parseTagMap(%q): %v", tt.in, err)
			continue
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("parseTagMap(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{`{"a":`, `[{'key': 'a'`, `{"a" "b"}`, `nonsense`} {
		if err := parseTagMap(bad, func(k, v string) {}); err == nil {
			t.Errorf("parseTagMap(%q) succeeded", bad)
		}
	}
}
