package main

import (
	"errors"
	"slices"
	"strings"
)

// parseListing reads goList's output into each package's imports of the
// project's own packages, both without the module's prefix.
func parseListing(listing string) map[string][]string {
	graph := map[string][]string{}
	for line := range strings.Lines(listing) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := internal(fields[0])
		if !ok {
			continue
		}
		deps := []string{}
		for _, imp := range fields[1:] {
			if dep, ok := internal(imp); ok {
				deps = append(deps, dep)
			}
		}
		slices.Sort(deps)
		graph[pkg] = slices.Compact(deps)
	}
	return graph
}

// internal is path without the module's prefix, if it is the project's.
func internal(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok && rest != ""
}

// renderGraph writes the graph as a code block, a package a line, in
// alphabetical order: "web  → access, advisor, …".
func renderGraph(graph map[string][]string) string {
	pkgs := make([]string, 0, len(graph))
	width := 0
	for p := range graph {
		pkgs = append(pkgs, p)
		width = max(width, len(p))
	}
	slices.Sort(pkgs)
	var b strings.Builder
	b.WriteString("```\n")
	for _, p := range pkgs {
		deps := strings.Join(graph[p], ", ")
		if deps == "" {
			deps = "(nothing internal)"
		}
		b.WriteString(p + strings.Repeat(" ", width-len(p)+2) + "→ " + deps + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}

// withGraph is doc with the text between the graph's markers replaced by
// graph.
func withGraph(doc, graph string) (string, error) {
	before, rest, ok := strings.Cut(doc, graphBegin+"\n")
	if !ok {
		return "", errors.New(architecture + ": no line " + graphBegin)
	}
	_, after, ok := strings.Cut(rest, graphEnd)
	if !ok {
		return "", errors.New(architecture + ": no " + graphEnd + " after the graph's start")
	}
	return before + graphBegin + "\n" + graph + graphEnd + after, nil
}
