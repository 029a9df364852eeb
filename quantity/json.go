package quantity

import (
	"bytes"
	"encoding/json"
)

// Text is a number as a JSON body sends it, a JSON number or a string
// holding one, kept as written until a Kind parses it (Kind.Parse(field,
// string(t))). Decoding into decimal.Decimal or float64 directly would skip
// the bounds: decimal's UnmarshalJSON builds 1e999999999 as readily as 12.5.
//
// JSON null leaves Text empty, as if the field were absent. Anything else
// that is not a number or a string (true, {…}) is kept as its first bytes
// so that parsing fails with the field's name, which an error from
// UnmarshalJSON could not give.
type Text string

// UnmarshalJSON implements json.Unmarshaler. It never fails.
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*t = ""
	case len(b) > MaxLen+2:
		// Too long to be a number whatever it is: keep enough for the
		// parser to say so.
		*t = Text(b[:MaxLen+1])
	case len(b) >= 2 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			*t = Text(b)
			return nil
		}
		if s == "" {
			// An empty string is not a missing field: say it is not a number.
			s = `""`
		}
		*t = Text(s)
	default:
		*t = Text(b)
	}
	return nil
}
