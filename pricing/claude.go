package pricing

import (
	"bytes"
	_ "embed"
	"strings"
	"sync"
	"time"
)

// The Claude Console names models as people read them ("Claude Haiku 4.5",
// "Claude 3.5 Sonnet") in its cost download, and by their API id
// ("claude-haiku-4-5-20251001") in its usage download, as the Admin API
// does. claude_models.csv maps the names to the ids, so that a model is
// one model whichever file it came from. Each row names its source: the
// Models API (GET /v1/models lists each id with its display_name), or
// Anthropic's pricing page for the family-first names it uses since 2025
// ("Claude Haiku 3" for "Claude 3 Haiku"). A name that meant one model up
// to a date and another after it has a row for each, the first with its
// until date (exclusive).

//go:embed data/claude_models.csv
var claudeModelsCSV []byte

// ClaudeModelsSource says where the table of Claude display names comes
// from, for pages that show it.
const ClaudeModelsSource = "Anthropic Models API (id, display_name) and pricing page; pricing/data/claude_models.csv"

type claudeName struct {
	id    string
	until time.Time // zero: no end
}

var claudeNames = sync.OnceValue(func() map[string][]claudeName {
	t, err := newTable(bytes.NewReader(claudeModelsCSV), "display_name", "model_id")
	if err != nil {
		panic("pricing: embedded claude_models.csv is corrupt: " + err.Error())
	}
	out := map[string][]claudeName{}
	for t.next() {
		n := claudeName{id: t.str("model_id")}
		if u := t.str("until"); u != "" {
			if n.until, err = time.Parse(time.DateOnly, u); err != nil {
				panic("pricing: embedded claude_models.csv has a bad until date: " + u)
			}
		}
		k := foldDisplayName(t.str("display_name"))
		out[k] = append(out[k], n)
	}
	if t.err != nil {
		panic("pricing: embedded claude_models.csv is corrupt: " + t.err.Error())
	}
	return out
})

// foldDisplayName is a display name as the table is keyed: lower case,
// single spaces.
func foldDisplayName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// ClaudeModelID returns the API id of the Claude model the Console names
// name on day, and whether the table knows the name. A name it does not
// know (a model newer than the table) becomes the id Anthropic gives such
// names since Claude 4.6: lower case, dashes for spaces and dots, without
// parentheses ("Claude Opus 5" → "claude-opus-5"). A name that is an id
// already is returned as it is.
func ClaudeModelID(name string, day time.Time) (string, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", false
	}
	if names, ok := claudeNames()[foldDisplayName(name)]; ok {
		for _, n := range names {
			if n.until.IsZero() || day.Before(n.until) {
				return n.id, true
			}
		}
	}
	if !strings.ContainsAny(name, " ()") {
		return name, false
	}
	slug := strings.NewReplacer("(", "", ")", "", ".", "-", " ", "-").Replace(foldDisplayName(name))
	return strings.Trim(slug, "-"), false
}
