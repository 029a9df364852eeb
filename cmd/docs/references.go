package main

import (
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
)

var (
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	scheme      = regexp.MustCompile(`^[a-z]+:`)
	docAnchor   = regexp.MustCompile(`(docs/[\w\-]+\.md)(#[\w\-]+)?`)
	docSection  = regexp.MustCompile(`(docs/[\w\-]+\.md),\s*["“]([^"”]+)["”]`)
	heading     = regexp.MustCompile(`^#{1,6}\s+(.*)`)
	slugDrop    = regexp.MustCompile("[`*~]|<[^>]+>")
	slugLink    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	slugKeep    = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	commentMark = regexp.MustCompile(`\s*(//|--|#)\s*`)
	spaces      = regexp.MustCompile(`\s+`)
)

// checkReferences returns each reference in files (paths in fsys) whose
// file, anchor or section does not exist, as "file: reference (why)".
func checkReferences(fsys fs.FS, files []string) []string {
	docs := map[string][]string{} // a Markdown file's headings, read once
	headings := func(name string) ([]string, bool) {
		if h, ok := docs[name]; ok {
			return h, h != nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			docs[name] = nil
			return nil, false
		}
		h := headingsOf(string(b))
		docs[name] = h
		return h, true
	}
	exists := func(name string) bool {
		_, err := fs.Stat(fsys, name)
		return err == nil
	}
	var bad []string
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, ".md"):
			text, err := fs.ReadFile(fsys, f)
			if err != nil {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(withoutCode(string(text)), -1) {
				target := m[1]
				if scheme.MatchString(target) || strings.HasPrefix(target, "/") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				to := f
				if file != "" {
					to = path.Join(path.Dir(f), file)
				}
				switch {
				case !exists(to):
					bad = append(bad, f+": "+target+" (no file)")
				case anchor != "" && strings.HasSuffix(to, ".md") && !hasAnchor(headings, to, anchor):
					bad = append(bad, f+": "+target+" (no heading)")
				}
			}
		case isSource(f):
			text, err := fs.ReadFile(fsys, f)
			if err != nil {
				continue
			}
			for _, m := range docAnchor.FindAllStringSubmatch(string(text), -1) {
				switch {
				case !exists(m[1]):
					bad = append(bad, f+": "+m[0]+" (no file)")
				case m[2] != "" && !hasAnchor(headings, m[1], m[2][1:]):
					bad = append(bad, f+": "+m[0]+" (no heading)")
				}
			}
			for _, m := range docSection.FindAllStringSubmatch(string(text), -1) {
				want := strings.ToLower(strings.TrimSpace(spaces.ReplaceAllString(commentMark.ReplaceAllString(m[2], " "), " ")))
				hs, _ := headings(m[1])
				found := false
				for _, h := range hs {
					if strings.Contains(strings.ToLower(slugDrop.ReplaceAllString(h, "")), want) {
						found = true
						break
					}
				}
				if !found {
					bad = append(bad, f+": "+m[0]+" (no such section)")
				}
			}
		}
	}
	return bad
}

// isSource reports whether f is code whose comments may cite the docs:
// not generated, not vendored, and not this checker (whose tests and usage
// cite files that do not exist on purpose).
func isSource(f string) bool {
	if strings.HasSuffix(f, "_templ.go") || strings.Contains(f, "/vendor/") || strings.HasPrefix(f, "cmd/docs/") {
		return false
	}
	switch path.Ext(f) {
	case ".go", ".templ", ".sql", ".js":
		return true
	}
	return false
}

// hasAnchor reports whether the Markdown file doc has a heading whose
// anchor is anchor.
func hasAnchor(headings func(string) ([]string, bool), doc, anchor string) bool {
	hs, _ := headings(doc)
	seen := map[string]int{}
	for _, h := range hs {
		s := slug(h)
		n := seen[s]
		seen[s]++
		if n > 0 {
			s += "-" + strconv.Itoa(n)
		}
		if s == anchor {
			return true
		}
	}
	return false
}

// headingsOf is the text of text's headings, fenced code left out.
func headingsOf(text string) []string {
	var out []string
	for line := range strings.Lines(withoutCode(text)) {
		if m := heading.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// withoutCode is text without its fenced code blocks: a shell comment in
// one is not a heading, nor an array index a link.
func withoutCode(text string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// slug is a heading's anchor as GitHub makes it: lower case, formatting
// and punctuation dropped, spaces as hyphens.
func slug(h string) string {
	s := slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), "")
	s = slugLink.ReplaceAllString(s, "$1")
	return strings.ReplaceAll(slugKeep.ReplaceAllString(s, ""), " ", "-")
}
