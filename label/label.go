// Package label cleans the names people give things: their own, an
// org's, a budget's, a token's, a connection's, an uploaded file's. A name
// is shown on pages and in the plain text of mail, where a line break in
// it would start what looks like a header line of its own ("Reply-To: …",
// "Click here: …"), and a bidirectional override (U+202E) would make
// "invoice‮fdp.exe" read as "invoiceexe.pdf". So every name is cleaned as
// it comes in (Clean), and the store cleans it again before keeping it:
// line breaks and tabs become spaces, other control characters and the
// bidirectional formatting characters are dropped. The rest is kept as
// typed. Text that is not UTF-8 is left as it is, for the checks that
// refuse it (a mistake the sender should see).
//
// Lookalike e-mail domains (a Cyrillic "а" among Latin letters) are
// refused where addresses come in (MixedScriptDomain).
package label

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// bidi reports whether r is a bidirectional formatting character: the
// embeddings and overrides (U+202A–U+202E), the isolates (U+2066–U+2069)
// and the marks (U+200E, U+200F, U+061C).
func bidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// Clean returns s as a name to keep: line breaks (CR, LF, U+2028,
// U+2029, NEL) and tabs become spaces, other control characters and
// bidirectional formatting characters are dropped, and the ends are
// trimmed of spaces.
func Clean(s string) string {
	if !needsCleaning(s) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte(s[i]) // not UTF-8: left for the text checks to refuse
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// one break, one space
		case r == '\r', r == '\n', r == '\t', r == '\v', r == '\f', r == 0x85, r == 0x2028, r == 0x2029:
			b.WriteByte(' ')
		case r == 0:
			b.WriteByte(0) // a NUL is refused, not hidden
		case unicode.IsControl(r), bidi(r):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return strings.TrimSpace(b.String())
}

// needsCleaning reports whether s holds anything Clean changes besides
// its ends.
func needsCleaning(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != 0) || (r >= 0x7f && r <= 0x9f) || bidi(r) || r == 0x2028 || r == 0x2029 {
			return true
		}
	}
	return false
}

// MixedScriptDomain reports whether the domain of the e-mail address
// email has a label that mixes scripts (Latin and Cyrillic, say) the way
// lookalike domains do: "pаypal.com" with a Cyrillic "а". Labels in one
// script, whatever it is, and Japanese and Korean mixes of Han with kana
// or Hangul, are fine. Punycode labels (xn--) are not decoded; they show
// as what they are.
func MixedScriptDomain(email string) bool {
	_, domain, ok := strings.Cut(email, "@")
	if !ok {
		return false
	}
	for label := range strings.SplitSeq(domain, ".") {
		scripts := map[string]bool{}
		for _, r := range label {
			if name := scriptOf(r); name != "" {
				scripts[name] = true
			}
		}
		delete(scripts, "Han") // with kana (Japanese) or Hangul (Korean), or alone
		if scripts["Hiragana"] || scripts["Katakana"] {
			delete(scripts, "Hiragana")
			delete(scripts, "Katakana")
			scripts["Japanese"] = true
		}
		if len(scripts) > 1 {
			return true
		}
	}
	return false
}

// scripts are those lookalikes are made of, and those a domain is written
// in; a letter of another script counts as its own.
var scripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Armenian", unicode.Armenian},
	{"Cherokee", unicode.Cherokee}, {"Han", unicode.Han}, {"Hiragana", unicode.Hiragana}, {"Katakana", unicode.Katakana},
	{"Hangul", unicode.Hangul}, {"Arabic", unicode.Arabic}, {"Hebrew", unicode.Hebrew}, {"Thai", unicode.Thai},
	{"Devanagari", unicode.Devanagari},
}

func scriptOf(r rune) string {
	if r < 0x80 {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return "" // digits, hyphens: common to every script
	}
	for _, s := range scripts {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	if unicode.IsLetter(r) {
		return "other:" + string(r)
	}
	return ""
}
