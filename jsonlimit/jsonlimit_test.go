package jsonlimit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for doc, ok := range map[string]bool{
		`{"a":[1,{"b":2}]}`:                          true,
		deep(MaxDepth):                               true,
		deep(MaxDepth + 1):                           false,
		strings.Repeat("[", 40_000):                  false,
		strings.Repeat(`{"a":`, 65):                  false,
		`"` + strings.Repeat("[", 500) + `"`:         true, // brackets in a string
		`["\"[[[[` + strings.Repeat("[", 100) + `"]`: true,
		`["\\"` + strings.Repeat(",[", 70):           false, // the string ended at \\"
		``:                                           true,
		`not json`:                                   true, // the decoder's to refuse
	} {
		err := Check([]byte(doc))
		if (err == nil) != ok {
			t.Errorf("Check(%.40q…) = %v, want ok %v", doc, err, ok)
		}
		var de *DepthError
		if err != nil && (!errors.As(err, &de) || !strings.Contains(err.Error(), "JSON nested more than 64 levels deep")) {
			t.Errorf("error %v", err)
		}
	}
	var v any
	if err := Unmarshal(bytes.Repeat([]byte("["), 100), &v); err == nil || !strings.Contains(err.Error(), "at byte 65") {
		t.Errorf("Unmarshal: %v", err)
	}
}

// BenchmarkCheck40KBOfBrackets: the document that cost 70 seconds is
// refused after reading 65 bytes; a flat 1 MB one in one pass.
func BenchmarkCheck40KBOfBrackets(b *testing.B) {
	doc := bytes.Repeat([]byte("["), 40_000)
	flat := []byte(`[` + strings.Repeat(`{"name":"x","amount":"12.5"},`, 35_000) + `{}]`)
	for b.Loop() {
		_ = Check(doc)
		_ = Check(flat)
	}
}
