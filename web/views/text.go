package views

import "strings"

// gist is the start of a long message, for a table cell: up to limit
// characters, cut at a word, with an ellipsis; the whole message stays
// on the row's own page.
func gist(s string, limit int) string {
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	cut := string(r[:limit])
	if i := strings.LastIndexByte(cut, ' '); i > limit/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
