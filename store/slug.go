package store

import (
	"strconv"
	"strings"
	"unicode"
)

// Slugify turns a name into a URL-safe slug: lowercase ASCII letters and
// digits separated by single dashes, at most 40 characters, never empty.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "org"
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }
