// Package jsonlimit bounds the JSON documents Burnrate reads from outside:
// API request bodies, Stripe's webhooks, and what connections fetch
// (providers' reports, the manifests in a tenant's bucket). Every such
// document passes Check before anything decodes it.
//
// Decoders spend work per level of nesting, and code that walks a document
// keeping where it is (a path, a stack) can spend work per level per
// level: 40 KB of "[" once cost 70 seconds and 4 GB. Check counts nesting
// in one pass over the bytes, with no memory of its own, and refuses a
// document nested deeper than MaxDepth; it does not otherwise judge the
// JSON, which is the decoder's job.
package jsonlimit

import (
	"encoding/json"
	"fmt"
)

// MaxDepth is how deep objects and arrays may nest. Burnrate's own
// documents nest a few levels; Stripe's events and the providers' reports
// about ten.
const MaxDepth = 64

// DepthError is a document nested deeper than MaxDepth.
type DepthError struct {
	Offset int // of the bracket that went too deep
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nested more than %d levels deep (at byte %d)", MaxDepth, e.Offset+1)
}

// Check refuses raw when its objects and arrays nest deeper than MaxDepth,
// with a *DepthError. Brackets inside strings do not count.
func Check(raw []byte) error {
	depth := 0
	inString, escaped := false, false
	for i, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > MaxDepth {
				return &DepthError{Offset: i}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// Unmarshal is json.Unmarshal after Check.
func Unmarshal(raw []byte, v any) error {
	if err := Check(raw); err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
