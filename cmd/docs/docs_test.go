package main

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestCheckReferences(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("See [ops](docs/ops.md#secret_key), [gone](docs/gone.md), [no](docs/ops.md#nowhere),\n" +
			"[site](https://example.com/x.md) and [self](#set-up).\n\n## Set up\n\n```sh\n# not a heading; [x](nope.md)\n```\n")},
		"docs/ops.md": {Data: []byte("# Operations\n\n## `SECRET_KEY`\n\n## Several `serve` processes\n\n## Health, metrics and logs\n\n## Health, metrics and logs\n")},
		"web/a.go": {Data: []byte("// See docs/ops.md#health-metrics-and-logs-1 and docs/ops.md#secret-key,\n" +
			"// (docs/ops.md, \"Several serve processes\") and (docs/ops.md, \"Several\n// instances\").\n")},
		"web/views/a_templ.go":   {Data: []byte("// docs/none.md")},
		"migrations/1.up.sql":    {Data: []byte("-- (docs/ops.md, \"Operations\") and docs/missing.md\n")},
		"static/vendor/x/lib.js": {Data: []byte("// docs/none.md")},
	}
	var files []string
	for f := range fsys {
		files = append(files, f)
	}
	slices.Sort(files)
	got := checkReferences(fsys, files)
	want := []string{
		"README.md: docs/gone.md (no file)",
		"README.md: docs/ops.md#nowhere (no heading)",
		"migrations/1.up.sql: docs/missing.md (no file)",
		"web/a.go: docs/ops.md#secret-key (no heading)",
		`web/a.go: docs/ops.md, "Several
// instances" (no such section)`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"`SECRET_KEY`":                        "secret_key",
		"Several `serve` processes":           "several-serve-processes",
		"Health, metrics and logs":            "health-metrics-and-logs",
		"Speed: the [GPU](x.md) usage rollup": "speed-the-gpu-usage-rollup",
		"Coût <em>réel</em> — by day":         "coût-réel--by-day",
		"  Removing an import  ":              "removing-an-import",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestGraph(t *testing.T) {
	t.Parallel()
	listing := module + "/web " + module + "/store fmt " + module + "/access " + module + "/store\n" +
		module + "/store context " + module + "/access\n" +
		module + "/access\n" +
		"example.com/other " + module + "/web\n"
	graph := renderGraph(parseListing(listing))
	want := "```\naccess  → (nothing internal)\nstore   → access\nweb     → access, store\n```\n"
	if graph != want {
		t.Errorf("graph:\n%s\nwant:\n%s", graph, want)
	}
	doc := "# A\n\n" + graphBegin + "\nold\n" + graphEnd + "\n\nafter\n"
	got, err := withGraph(doc, graph)
	if err != nil || got != "# A\n\n"+graphBegin+"\n"+want+graphEnd+"\n\nafter\n" {
		t.Errorf("withGraph = %q, %v", got, err)
	}
	if _, err := withGraph("# A\n", graph); err == nil {
		t.Error("a document without the markers: no error")
	}
}
